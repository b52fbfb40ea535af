// robust: yes
// race: no
// reason: a test-and-test-and-set lock (relaxed test, acquire exchange, release unlock) that the first thread holds from the start: it rewrites the held word (2, relaxed), raises go (relaxed), bumps the plain counter and unlocks; the second waits for go and takes the lock. After go it may still read the initial 1 of the word, older than the 2 it knows of: a stale read, but a failed test of the lock (still held), which leaves nothing behind; the read that leaves the test sees the unlock's 0, the newest write, and the exchange (an RMW) reads the latest value, so the counter's two increments are ordered by the release store and the acquire exchange
// The TTAS lock as C++ code writes it; -O1/-O2 merge the test loop with the exchange into one loop.
#include <atomic>
#include <cstdio>
#include <thread>

static std::atomic<int> word{1};
static std::atomic<int> go{0};
static long counter;

static void lock() {
  for (;;) {
    while (word.load(std::memory_order_relaxed) != 0) {
    }
    if (word.exchange(1, std::memory_order_acquire) == 0) return;
  }
}

static void unlock() { word.store(0, std::memory_order_release); }

int main() {
  std::thread owner([] {
    word.store(2, std::memory_order_relaxed);
    go.store(1, std::memory_order_relaxed);
    counter++;
    unlock();
  });
  std::thread taker([] {
    while (go.load(std::memory_order_relaxed) == 0) {
    }
    lock();
    counter++;
    unlock();
  });
  owner.join();
  taker.join();
  std::printf("%ld\n", counter);
  return 0;
}
