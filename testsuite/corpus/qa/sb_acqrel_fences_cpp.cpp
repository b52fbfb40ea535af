// robust: no
// race: no
// reason: SB with std::atomic_thread_fence(acq_rel) between store and load: an acq_rel fence is not in the SC order (only seq_cst fences are), so both loads may read 0; reference model (sb_acqrel_fence): not robust
// C++ SB whose fences are acq_rel instead of seq_cst, threads as lambdas capturing the atomics by reference.
#include <atomic>
#include <cstdio>
#include <thread>

int main() {
  std::atomic<long> x{0}, y{0};
  long r0 = -1, r1 = -1;
  std::thread a([&] {
    x.store(1, std::memory_order_relaxed); // pyrsan: stale
    std::atomic_thread_fence(std::memory_order_acq_rel);
    r0 = y.load(std::memory_order_relaxed); // pyrsan: violation
  });
  std::thread b([&] {
    y.store(1, std::memory_order_relaxed); // pyrsan: stale
    std::atomic_thread_fence(std::memory_order_acq_rel);
    r1 = x.load(std::memory_order_relaxed); // pyrsan: violation
  });
  a.join();
  b.join();
  std::printf("%ld %ld\n", r0, r1);
  return 0;
}
