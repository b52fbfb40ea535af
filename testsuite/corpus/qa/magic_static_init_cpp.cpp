// robust: yes
// race: no
// reason: a function-local static with a dynamic initialiser is initialised once under the C++ ABI's guard (__cxa_guard_acquire/release): the initialising thread's writes are hb-before every other thread's use of the object; the registry's plain fields are then only read
// Function-local statics (C++11 magic statics) first used by eight threads at once.
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

struct Registry {
  int entries[16];
  std::string name;
  Registry() : name("registry") {
    for (int i = 0; i < 16; i++) entries[i] = i * 3;
  }
};

static Registry &registry() {
  static Registry r;
  return r;
}

static int lookup(int i) {
  static const int offset = registry().entries[1] + 1;
  return registry().entries[i] + offset;
}

int main() {
  std::vector<std::thread> ts;
  int out[8];
  for (int i = 0; i < 8; i++) ts.emplace_back([i, &out] { out[i] = lookup(i); });
  for (auto &t : ts) t.join();
  int s = 0;
  for (int v : out) s += v;
  std::printf("%d %s\n", s, registry().name.c_str());
}
