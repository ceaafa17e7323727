{
  "targets": [
    {
      "target_name": "heap_guard",
      "sources": ["heap-guard.cc"]
    }
  ]
}
