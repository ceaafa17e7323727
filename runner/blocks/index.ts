// Every block type the executor knows, by type name.
import { agentBlock } from './agent.ts';
import { approvalBlock } from './approval.ts';
import type { BlockType } from './block.ts';
import { conditionBlock } from './condition.ts';
import { functionBlock } from './function.ts';
import { httpBlock } from './http.ts';
import { knowledgeBlock } from './knowledge.ts';
import { loopBlock } from './loop.ts';
import { parallelBlock } from './parallel.ts';
import { responseBlock } from './response.ts';
import { tableBlock } from './table.ts';
import { waitBlock } from './wait.ts';
import { workflowBlock } from './workflow.ts';

// biome-ignore lint/suspicious/noExplicitAny: each entry has its own config type
export const BLOCK_TYPES: ReadonlyMap<string, BlockType<any>> = new Map(
  [
    functionBlock,
    conditionBlock,
    responseBlock,
    httpBlock,
    agentBlock,
    waitBlock,
    loopBlock,
    parallelBlock,
    workflowBlock,
    tableBlock,
    knowledgeBlock,
    approvalBlock,
  ].map((b) => [b.type, b]),
);
