// robust: yes
// race: no
// reason: each worker throws, catches into its own std::exception_ptr slot and exits; main rethrows after join (join orders the slot's write before its read); std::async's future rethrows through the shared state (its own synchronisation); the exception objects' refcounts are libstdc++'s atomics, not instrumented
// Exceptions thrown in threads, carried to main by std::exception_ptr and by std::async futures.
#include <cstdio>
#include <exception>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

static std::exception_ptr errors[4];

static void work(int i) {
  try {
    if (i % 2) throw std::runtime_error("odd " + std::to_string(i));
    throw i;
  } catch (...) {
    errors[i] = std::current_exception();
  }
}

static int deep(int n) {
  if (n == 0) throw std::logic_error("bottom");
  return deep(n - 1) + 1;
}

int main() {
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; i++) ts.emplace_back(work, i);
  for (auto &t : ts) t.join();
  int caught = 0;
  for (auto &e : errors) {
    try {
      std::rethrow_exception(e);
    } catch (const std::runtime_error &) {
      caught += 10;
    } catch (int v) {
      caught += v;
    }
  }
  auto f = std::async(std::launch::async, [] { return deep(200); });
  try {
    f.get();
  } catch (const std::logic_error &) {
    caught += 100;
  }
  std::printf("%d\n", caught);
}
