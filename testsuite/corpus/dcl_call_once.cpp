// robust: yes
// race: no
// reason: std::call_once synchronises the initialiser with every caller, and the function-local static is thread-safe
// C++: lazy initialisation through std::call_once and a function-local static.
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

static std::once_flag once;
static int *table;

static int &local_static() {
  static int v = 41;
  return v;
}

static void init() {
  table = new int[4]{1, 2, 3, 4};
}

int main() {
  std::vector<std::thread> ts;
  std::vector<int> out(3);
  for (int i = 0; i < 3; i++)
    ts.emplace_back([i, &out] {
      std::call_once(once, init);
      out[i] = table[i] + local_static();
    });
  for (auto &t : ts)
    t.join();
  std::printf("%d %d %d\n", out[0], out[1], out[2]);
  delete[] table;
  return 0;
}
