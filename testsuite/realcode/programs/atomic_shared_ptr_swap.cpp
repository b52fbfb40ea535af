// std::atomic<std::shared_ptr> (C++20) stored by one thread, loaded by another. libstdc++ 12's
// load() releases its lock bit with a relaxed fetch_sub, so its plain read of the pointer is not
// hb-before a later store's swap of it: a data race inside the library (ThreadSanitizer reports
// it too, in about 1 run of 6). The report's stack of the store must reach this file's lambda.
#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>
struct Cfg { int a, b; };
static std::atomic<std::shared_ptr<Cfg>> cur;
int main() {
  cur.store(std::make_shared<Cfg>(Cfg{1, -1}));
  std::thread w([] { for (int i = 2; i < 5; i++) cur.store(std::make_shared<Cfg>(Cfg{i, -i})); });
  int bad = 0;
  std::thread r([&bad] { for (int i = 0; i < 5; i++) { auto c = cur.load(); if (c->a + c->b) bad = 1; } });
  w.join(); r.join();
  std::printf("%d\n", bad);
}
