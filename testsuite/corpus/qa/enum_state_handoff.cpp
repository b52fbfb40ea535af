// robust: yes
// race: no
// reason: a std::atomic of an enum class handed back and forth: each side waits (acquire) for its own state and publishes the other's with a release store after writing the plain buffer; a stale read of the previous state only spins
// Two threads alternate twice over one plain buffer through a state machine.
#include <atomic>
#include <cstdio>
#include <thread>

enum class State { Empty, Full };
static std::atomic<State> state{State::Empty};
static int buffer;

static void producer() {
  for (int i = 1; i <= 2; i++) {
    while (state.load(std::memory_order_acquire) != State::Empty) {
    }
    buffer = i;
    state.store(State::Full, std::memory_order_release);
  }
}

static long consumer() {
  long sum = 0;
  for (int i = 1; i <= 2; i++) {
    while (state.load(std::memory_order_acquire) != State::Full) {
    }
    sum += buffer;
    state.store(State::Empty, std::memory_order_release);
  }
  return sum;
}

int main() {
  long sum = 0;
  std::thread p(producer);
  std::thread c([&] { sum = consumer(); });
  p.join();
  c.join();
  std::printf("%ld\n", sum);
  return sum == 3 ? 0 : 1;
}
