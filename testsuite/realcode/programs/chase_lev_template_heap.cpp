// robust: yes
// race: no
// reason: Chase-Lev with Le et al.'s orders over a heap-allocated ring of std::atomic<T>: push stores the item (relaxed), fences release and stores bottom (relaxed); take stores bottom-1, fences seq_cst, reads top; steal reads top (acquire), fences seq_cst, reads bottom (acquire), reads the item and claims it with a seq_cst CAS on top; the last item is contended by seq_cst CASes on top. The SC fences separate each side's store from its read of the other index (no store buffering), and a stale item read by a thief is discarded by its failing CAS
// Work-stealing deque template (Chase-Lev, capacity 8, no resizing): the owner pushes 3 and takes until empty, one thief steals until all 3 are taken.
#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>

template <typename T> class Deque {
  std::atomic<long> top_{0}, bottom_{0};
  std::unique_ptr<std::atomic<T>[]> buf_;
  static constexpr long N = 8;

public:
  Deque() : buf_(new std::atomic<T>[N]) {}
  void push(T v) {
    long b = bottom_.load(std::memory_order_relaxed);
    buf_[b % N].store(v, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    bottom_.store(b + 1, std::memory_order_relaxed);
  }
  bool take(T &out) {
    long b = bottom_.load(std::memory_order_relaxed) - 1;
    bottom_.store(b, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    long t = top_.load(std::memory_order_relaxed);
    if (t > b) {
      bottom_.store(b + 1, std::memory_order_relaxed);
      return false;
    }
    out = buf_[b % N].load(std::memory_order_relaxed);
    if (t == b) {
      bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
      bottom_.store(b + 1, std::memory_order_relaxed);
      return won;
    }
    return true;
  }
  bool steal(T &out) {
    long t = top_.load(std::memory_order_acquire);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    long b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return false;
    out = buf_[t % N].load(std::memory_order_relaxed);
    return top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
  }
};

static Deque<int> dq;
static std::atomic<int> taken{0};

int main() {
  long sum_owner = 0, sum_thief = 0;
  std::thread thief([&sum_thief] {
    int v;
    while (taken.load(std::memory_order_acquire) < 3)
      if (dq.steal(v)) {
        sum_thief += v;
        taken.fetch_add(1, std::memory_order_acq_rel);
      }
  });
  for (int i = 1; i <= 3; i++) dq.push(i);
  int v;
  while (taken.load(std::memory_order_acquire) < 3)
    if (dq.take(v)) {
      sum_owner += v;
      taken.fetch_add(1, std::memory_order_acq_rel);
    }
  thief.join();
  std::printf("%ld\n", sum_owner + sum_thief);
  return sum_owner + sum_thief == 6 ? 0 : 1;
}
