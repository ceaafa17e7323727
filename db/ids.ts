// Ids as the service makes them: UUIDs. A string that is not one names nothing, so stores answer
// "not found" for it before asking the database (which would reject the cast).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (s: unknown): s is string => typeof s === 'string' && UUID.test(s);
