// robust: yes
// race: no
// reason: std::atomic_store / std::atomic_load on a std::shared_ptr (the C++11 free functions; libstdc++ serialises them with a mutex from its pool, inside libstdc++.so): the reader's load happens after the writer's store of the same shared_ptr object through that mutex, and the pointee's fields are written before the store; no atomic access of the program can read stale
// C++: a config object swapped in with std::atomic_store(&sp, ...) and read with std::atomic_load(&sp).
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

struct Config {
  int version;
  std::string name;
};

static std::shared_ptr<Config> current = std::make_shared<Config>(Config{0, "initial"});

int main() {
  std::thread writer([] {
    auto next = std::make_shared<Config>(Config{1, "second"});
    std::atomic_store(&current, next);
  });
  std::thread reader([] {
    std::shared_ptr<Config> c = std::atomic_load(&current);
    std::printf("%d %s\n", c->version, c->name.c_str());
  });
  writer.join();
  reader.join();
  return 0;
}
