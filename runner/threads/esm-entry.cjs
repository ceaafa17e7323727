'use strict';
// The module Piscina loads in each worker of our pools (runner/sandbox/pool.ts, runner/ingestion/pool.ts).
// Piscina loads a worker's module with require() before it tries import(), and Node 24's require() of an
// ES module aborts the whole process (an assertion in ModuleWrap::CreateRequiredModuleFacade) when the
// worker is terminated while that module is still loading: a pool destroyed soon after it started, as
// at a quick shutdown. This file is CommonJS, so require() loads it at once; it loads the pool's worker
// module (`workerData.entry`, a file URL) with import(), which a terminate() just ends.
const { workerData } = require('node:worker_threads');

const loading = import(workerData.entry);
// A module that fails to load fails each task with its error, not the worker with an unhandled rejection.
loading.catch(() => {});

module.exports = async function runTask(task) {
  const worker = await loading;
  return worker.default(task);
};
