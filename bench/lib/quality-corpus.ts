// The corpus of bench/knowledge-quality.ts: "The Keeper's Year", a short handbook of beekeeping written
// for this project (so it ships under the project's licence, with no download), as one HTML page per
// chapter, and questions about it written the way users ask them: in their own words, rarely the
// book's, each with the chapter and a phrase of the passage that answers it.

export interface Chapter {
  file: string;
  title: string;
  paragraphs: string[];
}

export interface Question {
  question: string;
  /** The answering chapter's file. */
  file: string;
  /** Words of the answering passage, as the chapter has them: a chunk holding them answers. */
  passage: string;
}

export const CHAPTERS: Chapter[] = [
  {
    file: '01-why-keep-bees.html',
    title: 'Why Keep Bees',
    paragraphs: [
      'Most people come to beekeeping for honey and stay for the bees. A single strong colony in a good year can give twenty to forty kilograms of surplus honey, but the first season rarely gives any, because the colony spends it building comb.',
      'Bees also pollinate the gardens and orchards within about three kilometres of the hive. Apple, pear and cherry growers often report heavier crops once a few colonies live nearby, and a vegetable patch of squash and beans sets more fruit.',
      'Keeping bees asks for about an hour a week in spring and summer and very little in winter. The beginner should expect to be stung now and then; most keepers find the swelling smaller after the first season as the body grows used to the venom.',
      'Before buying anything, ask the local council whether hives are allowed in your garden and tell your neighbours. A hedge or a fence two metres high in front of the entrance makes the bees fly up and over, away from people walking past.',
    ],
  },
  {
    file: '02-the-colony.html',
    title: 'The Colony and Its Castes',
    paragraphs: [
      'A colony is one family of up to sixty thousand bees in summer. It has a single queen, many thousand female workers, and a few hundred male drones that live only to mate and are driven out of the hive in autumn.',
      'The queen is the mother of every bee in the hive. At the height of the season she lays up to two thousand eggs a day, and she can live for three to five years, although most keepers replace her after two because her laying slows.',
      'A worker changes jobs as she ages. For her first three weeks she cleans cells, feeds larvae, makes wax and guards the entrance; only then does she fly out to forage. A summer worker wears out her wings in about six weeks.',
      'The bees talk through scent and dance. A forager returning with news of flowers performs the waggle dance on the comb, and the angle of her run against the vertical tells her sisters the direction of the food relative to the sun.',
    ],
  },
  {
    file: '03-hives-and-equipment.html',
    title: 'Hives and Equipment',
    paragraphs: [
      'The Langstroth hive is the most common design in the world: stacked wooden boxes holding removable frames. Its secret is the bee space, a gap of about eight millimetres that bees leave open; any smaller they glue with propolis and any larger they fill with comb.',
      'The bottom boxes are the brood chamber, where the queen lays. The shallower boxes above, called supers, hold the honey the keeper takes. A queen excluder, a grid the workers can pass but the larger queen cannot, keeps eggs out of the supers.',
      'A beginner needs a veil or a full suit, gloves, a hive tool for prising frames apart, and a smoker. Buy the veil before anything else; a sting on the face or near the eyes is the one that really hurts.',
      'Top-bar hives and Warré hives are cheaper to build and let bees draw comb in their own way, but their combs break easily and most books and local clubs teach with framed hives, so start with what your mentor uses.',
    ],
  },
  {
    file: '04-starting-a-colony.html',
    title: 'Starting a Colony',
    paragraphs: [
      'There are three ways to get bees. A package is a screened box of about a kilogram of bees with a caged queen, shaken from other hives. A nucleus, or nuc, is a small working colony of five frames with brood, stores and a laying queen. A swarm can be caught for free.',
      'A nucleus costs more than a package but builds up faster, because it already has comb and young bees emerging. For a first colony most clubs advise buying a nuc from a local beekeeper, whose bees are used to your climate.',
      'Install new bees in the late afternoon or on a cool evening so they settle rather than fly off. Put the frames of the nuc in the middle of the brood box in the order they came, and fill the gaps on either side with empty frames.',
      'Feed the new colony sugar syrup, one part sugar to one part water by weight, until it has drawn out the frames of its first box. Then leave it alone for a week: opening the hive too soon can make the bees kill or abandon their queen.',
    ],
  },
  {
    file: '05-inspections.html',
    title: 'Inspecting the Hive',
    paragraphs: [
      'From spring until late summer look through the brood box every seven to ten days. Choose a warm, calm day around midday, when many foragers are out, and stand to the side of the entrance, never in front of the flight path.',
      'Puff a little cool smoke into the entrance and under the lid and wait a minute. Smoke masks the alarm scent the guards release and makes the bees fill up on honey, which calms them. Too much smoke drives them off the frames and spoils the look.',
      'On every inspection answer four questions: is the queen laying, is there room, are there signs of disease, and are they making queen cells. Eggs standing upright at the bottom of cells mean the queen was there within the last three days, even if you cannot see her.',
      'Keep a notebook, or a card under the roof, with the date, the temper of the bees, the frames of brood and stores, and anything odd. Over a season these notes show problems long before a single inspection does.',
    ],
  },
  {
    file: '06-swarming.html',
    title: 'Swarming and How to Prevent It',
    paragraphs: [
      'Swarming is how a colony reproduces: the old queen leaves with about half the bees to found a new home, and the colony left behind raises a new queen. A swarm on a branch looks alarming but is gentle, since the bees have full stomachs and no home to defend.',
      'Colonies swarm when they feel crowded, most often from late spring to midsummer. The warning sign is queen cells, peanut-shaped cells hanging from the bottom edges of the frames; a cell with an egg or larva inside means the colony intends to leave within days.',
      'To prevent swarming, give room before they need it: add a super when the bees cover seven or eight frames of the top box. Replacing a queen older than two years also helps, because young queens give off more of the scent that holds the colony together.',
      'If queen cells are already there, make an artificial swarm: move the old queen with one frame of brood to a new box on the old site, and the old box to a new site a metre away. The foragers return to the old place, and the colony believes it has swarmed.',
    ],
  },
  {
    file: '07-pests-and-diseases.html',
    title: 'Pests and Diseases',
    paragraphs: [
      'The varroa mite is the greatest threat to honey bees today. It feeds on developing bees and spreads viruses such as deformed wing virus; a colony left untreated usually dies within two or three years.',
      'Count the mites before you treat. In the sugar roll test, shake about three hundred bees from a brood frame into a jar with a spoon of icing sugar, roll it for a minute, and count the mites that fall out through the mesh lid; more than nine means treat now.',
      'Common treatments are oxalic acid dribbled between the frames in midwinter, when there is no brood for the mites to hide in, and formic acid or thymol strips in late summer after the honey is off. Always follow the label and wear acid-resistant gloves.',
      'American foulbrood turns larvae into a brown, ropy mass that draws out like a string on a matchstick, and the comb smells sour. It is notifiable in many countries: do not treat it yourself, close the hive and call the bee inspector.',
      'Wax moth larvae tunnel through stored comb and leave it a mess of silk. Keep spare frames in a cold place or freeze them for two days before storing, and never leave weak colonies with more comb than they can patrol.',
    ],
  },
  {
    file: '08-honey-harvest.html',
    title: 'Harvesting Honey',
    paragraphs: [
      'Take honey only from the supers, and only when the frames are capped: the bees seal a cell with wax once the nectar has dried to below about eighteen percent water. Uncapped honey can ferment in the jar.',
      'To clear bees from the supers, put a clearer board with one-way escapes under them the evening before. By the next morning most bees have gone down and cannot come back up, and the boxes can be lifted off almost empty.',
      'In a warm room slice the cappings off with a heated knife or an uncapping fork, spin the frames in an extractor, and pour the honey through a double sieve into a settling tank. After a day the air bubbles rise and the honey can be run into jars.',
      'Leave the colony enough to live on. A hive in a temperate climate needs about twenty kilograms of honey to get through winter; if you take more than that, you must feed it sugar in autumn instead.',
    ],
  },
  {
    file: '09-autumn-and-winter.html',
    title: 'Autumn and Winter Care',
    paragraphs: [
      'Preparing for winter starts in late summer. Treat for varroa as soon as the honey is off, so that the long-lived winter bees the queen is starting to lay are raised free of mites.',
      'Feed thick syrup, two parts sugar to one part water, in early autumn while it is warm enough for the bees to take it down and store it. Heft the hive from behind: a colony ready for winter feels as if it is nailed to the stand.',
      'Fit a mouse guard over the entrance before the first frosts, since mice like a warm hive and chew the combs. Strap the roof down in windy places, and tilt the hive slightly forward so rain runs out of the entrance.',
      'In winter the bees form a cluster and shiver their flight muscles to keep its centre around twenty degrees. Do not open the hive; it is damp rather than cold that kills colonies, so make sure the roof is dry and there is some ventilation.',
    ],
  },
  {
    file: '10-beeswax-and-products.html',
    title: 'Beeswax and Other Products',
    paragraphs: [
      'The cappings cut off at harvest are the cleanest wax a keeper gets. Wash them, melt them gently in a double boiler or a solar wax melter, and strain the liquid wax through a cloth before pouring it into moulds.',
      'Never melt wax over a naked flame: it catches fire at around two hundred degrees, and a wax fire must be smothered with a lid, not put out with water.',
      'Beeswax makes candles that burn slowly and with little smoke, furniture polish when dissolved in turpentine, and wrapping cloths for food when ironed into cotton.',
      'Bees also gather propolis, a resin from tree buds that they use to seal cracks. Scraped from the frames and soaked in alcohol, it makes a tincture that some people use on small cuts.',
    ],
  },
];

export const QUESTIONS: Question[] = [
  {
    question: 'how much honey will I get from one hive?',
    file: '01-why-keep-bees.html',
    passage: 'twenty to forty kilograms of surplus honey',
  },
  {
    question: 'why did I get no honey in my first year',
    file: '01-why-keep-bees.html',
    passage: 'the first season rarely gives any',
  },
  {
    question: 'will bees help my apple trees produce more fruit',
    file: '01-why-keep-bees.html',
    passage: 'Apple, pear and cherry growers',
  },
  {
    question: 'how much time does looking after bees take each week',
    file: '01-why-keep-bees.html',
    passage: 'about an hour a week in spring and summer',
  },
  {
    question: 'do I need permission to put a beehive in my back yard?',
    file: '01-why-keep-bees.html',
    passage: 'ask the local council whether hives are allowed',
  },
  {
    question: 'how many bees live in one hive',
    file: '02-the-colony.html',
    passage: 'up to sixty thousand bees in summer',
  },
  {
    question: 'what happens to male bees at the end of the year',
    file: '02-the-colony.html',
    passage: 'driven out of the hive in autumn',
  },
  {
    question: 'how many eggs does the queen lay per day',
    file: '02-the-colony.html',
    passage: 'two thousand eggs a day',
  },
  {
    question: 'how long do worker bees live',
    file: '02-the-colony.html',
    passage: 'wears out her wings in about six weeks',
  },
  {
    question: 'how do bees tell each other where flowers are',
    file: '02-the-colony.html',
    passage: 'performs the waggle dance on the comb',
  },
  {
    question: 'what is bee space and why does it matter',
    file: '03-hives-and-equipment.html',
    passage: 'a gap of about eight millimetres',
  },
  {
    question: 'how do I keep the queen from laying eggs in the honey boxes',
    file: '03-hives-and-equipment.html',
    passage: 'A queen excluder, a grid the workers can pass',
  },
  {
    question: 'what protective gear should a beginner buy first',
    file: '03-hives-and-equipment.html',
    passage: 'Buy the veil before anything else',
  },
  {
    question: 'is a top bar hive a good choice for a beginner',
    file: '03-hives-and-equipment.html',
    passage: 'their combs break easily',
  },
  {
    question: "what's the difference between a package and a nuc",
    file: '04-starting-a-colony.html',
    passage: 'A package is a screened box',
  },
  {
    question: 'should my first bees be a package or a nucleus colony',
    file: '04-starting-a-colony.html',
    passage: 'most clubs advise buying a nuc from a local beekeeper',
  },
  {
    question: 'what time of day should I put new bees into the hive',
    file: '04-starting-a-colony.html',
    passage: 'Install new bees in the late afternoon',
  },
  {
    question: 'what ratio of sugar to water for feeding a new colony',
    file: '04-starting-a-colony.html',
    passage: 'one part sugar to one part water by weight',
  },
  {
    question: 'how often should I open the hive to check on it',
    file: '05-inspections.html',
    passage: 'every seven to ten days',
  },
  {
    question: 'why does smoke calm bees down',
    file: '05-inspections.html',
    passage: 'Smoke masks the alarm scent',
  },
  {
    question: "I can't find the queen, how do I know she is still there",
    file: '05-inspections.html',
    passage: 'Eggs standing upright at the bottom of cells',
  },
  {
    question: 'what records should I keep about my hives',
    file: '05-inspections.html',
    passage: 'Keep a notebook, or a card under the roof',
  },
  {
    question: 'is a swarm of bees on a tree dangerous',
    file: '06-swarming.html',
    passage: 'A swarm on a branch looks alarming but is gentle',
  },
  {
    question: 'what are the signs that my colony is about to swarm',
    file: '06-swarming.html',
    passage: 'peanut-shaped cells hanging from the bottom edges',
  },
  {
    question: 'how can I stop my bees from leaving the hive',
    file: '06-swarming.html',
    passage: 'give room before they need it',
  },
  {
    question: 'what to do when I find queen cells in the hive',
    file: '06-swarming.html',
    passage: 'make an artificial swarm',
  },
  {
    question: 'what is the biggest danger to honey bees',
    file: '07-pests-and-diseases.html',
    passage: 'The varroa mite is the greatest threat',
  },
  {
    question: 'how do I check how many mites my bees have',
    file: '07-pests-and-diseases.html',
    passage: 'In the sugar roll test',
  },
  {
    question: 'when should I use oxalic acid',
    file: '07-pests-and-diseases.html',
    passage: 'oxalic acid dribbled between the frames in midwinter',
  },
  {
    question: 'the larvae look brown and stringy and the hive smells bad, what is it',
    file: '07-pests-and-diseases.html',
    passage: 'American foulbrood turns larvae into a brown',
  },
  {
    question: 'how do I protect spare comb from moths',
    file: '07-pests-and-diseases.html',
    passage: 'freeze them for two days before storing',
  },
  {
    question: 'how do I know when honey is ready to take',
    file: '08-honey-harvest.html',
    passage: 'only when the frames are capped',
  },
  {
    question: 'how do I get the bees off the honey boxes before harvest',
    file: '08-honey-harvest.html',
    passage: 'put a clearer board with one-way escapes',
  },
  {
    question: 'what equipment do I need to extract honey from frames',
    file: '08-honey-harvest.html',
    passage: 'spin the frames in an extractor',
  },
  {
    question: 'how much honey should I leave for the bees over winter',
    file: '08-honey-harvest.html',
    passage: 'about twenty kilograms of honey to get through winter',
  },
  {
    question: 'how thick should autumn syrup be',
    file: '09-autumn-and-winter.html',
    passage: 'two parts sugar to one part water',
  },
  {
    question: 'how can I tell if the hive has enough food without opening it',
    file: '09-autumn-and-winter.html',
    passage: 'Heft the hive from behind',
  },
  {
    question: 'how do I keep mice out of the hive',
    file: '09-autumn-and-winter.html',
    passage: 'Fit a mouse guard over the entrance',
  },
  {
    question: 'how do bees stay warm when it is freezing outside',
    file: '09-autumn-and-winter.html',
    passage: 'shiver their flight muscles',
  },
  {
    question: 'how do I clean and melt wax from cappings',
    file: '10-beeswax-and-products.html',
    passage: 'melt them gently in a double boiler',
  },
  {
    question: 'what should I do if melting wax catches fire',
    file: '10-beeswax-and-products.html',
    passage: 'smothered with a lid, not put out with water',
  },
  {
    question: 'what can I make with beeswax',
    file: '10-beeswax-and-products.html',
    passage: 'candles that burn slowly',
  },
  {
    question: 'what is propolis used for',
    file: '10-beeswax-and-products.html',
    passage: 'a resin from tree buds',
  },
];

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A chapter as the HTML page the bench uploads. */
export function chapterHtml(chapter: Chapter): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(chapter.title)} - The Keeper's Year</title></head>
<body><article>
<h1>${escapeHtml(chapter.title)}</h1>
${chapter.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n')}
</article></body></html>
`;
}
