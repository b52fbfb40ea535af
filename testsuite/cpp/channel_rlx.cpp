// robust: no
// race: no
// functions: try_consume
// reason: the flag is stored and loaded relaxed, so the consumer may see ready=1 and still read data=0 (MP with relaxed flag: po;rf;po;fr cycle)
// C++ class with atomic members (a one-shot channel), lambda thread bodies (the consumer spins until ready), relaxed flag: the data load is flagged.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <atomic>
#include <cstdio>
#include <thread>

class Channel {
public:
  void publish(int value) {
    data_.store(value, std::memory_order_relaxed);
    ready_.store(true, std::memory_order_relaxed);
  }
  bool try_consume(int &out) const {
    if (!ready_.load(std::memory_order_relaxed))
      return false;
    out = data_.load(std::memory_order_relaxed); // pyrsan: violation
    return true;
  }

private:
  std::atomic<int> data_{0};
  std::atomic<bool> ready_{false};
};

int main() {
  Channel channel;
  int got = -1;
  std::thread producer([&channel] { channel.publish(42); });
  std::thread consumer([&channel, &got] {
    while (!channel.try_consume(got)) {
    }
  });
  producer.join();
  consumer.join();
  std::printf("got=%d\n", got);
  return 0;
}
