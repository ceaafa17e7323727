// The heap guard of the worker-thread pools (function code, document ingestion): loaded by
// runner/threads/heap-guard.ts, built by scripts/build-heap-guard.ts. V8 calls an isolate's most
// recently added near-heap-limit callback when, after a full GC, its old generation is still past the
// limit. Node's own callback for a worker grants 16 MB and stops the worker; but one allocation may pass
// the limit by far more than that (the first object in the young large-object space is always allowed,
// whatever its size, and lands in the old generation at the next GC), and V8 then aborts the whole
// process ("Reached heap limit"). This callback grants room for any single object instead, and the
// worker's pool, which sees the limit rise in the worker's heap statistics, stops the worker itself
// (runner/threads/slots.ts).
#include <node.h>

namespace {

// More than the largest object V8 makes (an array or a string of about 1 GiB) together with the copy a
// built-in may make of it (Array.prototype.fill turning 1 GiB of elements into doubles). Granted again
// at each GC that finds the heap past its limit, until the pool stops the worker: only a task over its
// limit ever uses it, and only for as long as the pool takes to notice.
constexpr size_t kHeadroomBytes = size_t{2} << 30;

size_t NearHeapLimit(void* /* data */, size_t current_heap_limit, size_t /* initial_heap_limit */) {
  return current_heap_limit + kHeadroomBytes;
}

}  // namespace

// Context-aware, so that every worker thread can load it; it exports nothing.
NODE_MODULE_INIT(/* exports, module, context */) {
  context->GetIsolate()->AddNearHeapLimitCallback(NearHeapLimit, nullptr);
}
