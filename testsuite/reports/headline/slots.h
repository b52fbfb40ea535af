// Slot helpers shared by every queue file.
#include <atomic>
inline int load_slot(std::atomic<int> &s) { return s.load(std::memory_order_relaxed); }
