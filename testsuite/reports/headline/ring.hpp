// The ring's helpers (inlined into every caller).
#include "slots.h"
struct ring { std::atomic<int> data{0}; std::atomic<int> ready{0}; };
inline int peek(ring &q) { return load_slot(q.data); }
