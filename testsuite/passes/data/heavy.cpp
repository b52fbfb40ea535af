// libstdc++ heavy lifting: containers, shared_ptr refcount atomics, mutex/condvar, iostream,
// exceptions (invoke/landingpad), lambdas, templates with quoted IR names.
#include <atomic>
#include <condition_variable>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {
std::mutex m;
std::condition_variable cv;
int stage = 0;
std::atomic<int> hits{0};

template <class T> struct Node {
  T value;
  std::shared_ptr<Node> next;
};

int risky(int v) {
  if (v % 7 == 3) throw std::runtime_error("bad " + std::to_string(v));
  return v * 2;
}
}  // namespace

int main() {
  std::map<std::string, int> counts;
  std::shared_ptr<Node<int>> head;
  for (int i = 0; i < 20; i++) {
    head = std::make_shared<Node<int>>(Node<int>{i, head});
    try {
      counts["ok"] += risky(i);
    } catch (const std::exception &e) {
      counts[e.what()]++;
    }
  }
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; t++)
    ts.emplace_back([t, head] {
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [t] { return stage == t; });
      for (auto n = head; n; n = n->next) hits.fetch_add(n->value, std::memory_order_relaxed);
      stage++;
      cv.notify_all();
    });
  for (auto &t : ts) t.join();
  for (auto &kv : counts) std::cout << kv.first << "=" << kv.second << "\n";
  std::cout << "hits=" << hits.load() << " uses=" << head.use_count() << std::endl;
  return 0;
}
