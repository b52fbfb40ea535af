// robust: yes
// race: no
// reason: message passing through a release store / acquire load of the flag: the consumer that sees ready=1 also sees data=42 (MP is robust)
// C++ class with atomic members (a one-shot channel), lambda thread bodies (the consumer spins until ready), release/acquire.
#include <atomic>
#include <cstdio>
#include <thread>

class Channel {
public:
  void publish(int value) {
    data_.store(value, std::memory_order_relaxed);
    ready_.store(true, std::memory_order_release);
  }
  bool try_consume(int &out) const {
    if (!ready_.load(std::memory_order_acquire))
      return false;
    out = data_.load(std::memory_order_relaxed);
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
