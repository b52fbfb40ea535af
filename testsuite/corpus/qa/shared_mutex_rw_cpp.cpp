// robust: yes
// race: no
// reason: std::shared_mutex: the writer's unique_lock and the readers' shared_lock order every access of the plain table by happens-before; no atomic of the program's own
// A std::shared_mutex-protected table: one writer updates two plain fields together, three readers check them.
#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

static std::shared_mutex mu;
static int a, b;
static int bad;

static void writer() {
  for (int i = 1; i <= 20; i++) {
    std::unique_lock<std::shared_mutex> g(mu);
    a = i;
    b = -i;
  }
}

static void reader() {
  for (int i = 0; i < 20; i++) {
    std::shared_lock<std::shared_mutex> g(mu);
    if (a + b != 0) bad = 1; /* never: readers see both fields of one update */
  }
}

int main() {
  std::vector<std::thread> ts;
  ts.emplace_back(writer);
  for (int i = 0; i < 3; i++) ts.emplace_back(reader);
  for (auto &t : ts) t.join();
  std::printf("%d %d %d\n", a, b, bad);
}
