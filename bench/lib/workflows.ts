// The workflow the execution benches run: a function, a condition on its output, a response.
export const THREE_BLOCKS = {
  inputs: { name: { type: 'string', required: true } },
  blocks: [
    { id: 'greet', type: 'function', code: 'return { message: `Hello, ${inputs.name}!` }' },
    {
      id: 'check',
      type: 'condition',
      branches: [{ id: 'long', if: '<greet.message>.length > 12' }, { id: 'short' }],
    },
    { id: 'done', type: 'response', data: { message: '<greet.message>', size: '<check.selected>' } },
  ],
  edges: [
    { from: 'greet', to: 'check' },
    { from: 'check', to: 'done', branch: 'long' },
    { from: 'check', to: 'done', branch: 'short' },
  ],
};
