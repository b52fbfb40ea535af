// robust: yes
// race: no
// reason: std::promise::set_value happens before std::future::get returns; std::async's result likewise
// C++: std::promise / std::future and std::async hand results between threads.
#include <cstdio>
#include <future>
#include <thread>
#include <vector>

int main() {
  std::promise<std::vector<int>> pr;
  auto fut = pr.get_future();
  std::thread t([&pr] {
    std::vector<int> v{1, 2, 3};
    pr.set_value(std::move(v));
  });
  auto v = fut.get();
  auto f2 = std::async(std::launch::async, [] { return 40; });
  int r = f2.get() + (int)v.size();
  t.join();
  std::printf("%d\n", r);
  return r == 43 ? 0 : 1;
}
