// robust: yes
// race: no
// reason: the Boost/libstdc++ reference count: fetch_sub(release), and an acquire fence before delete by the thread that drops the last reference, so every use happens before the delete
// C++: intrusive reference counting with fetch_sub(release) + atomic_thread_fence(acquire) before delete.
#include <atomic>
#include <cstdio>
#include <thread>

struct Obj {
  std::atomic<int> refs{3};
  int data[4] = {0, 0, 0, 0};
};

static void release(Obj *o) {
  if (o->refs.fetch_sub(1, std::memory_order_release) == 1) {
    std::atomic_thread_fence(std::memory_order_acquire);
    delete o;
  }
}

int main() {
  Obj *o = new Obj;
  std::thread t1([o] {
    o->data[0] = 1;
    release(o);
  });
  std::thread t2([o] {
    o->data[1] = 2;
    release(o);
  });
  o->data[2] = 3;
  release(o);
  t1.join();
  t2.join();
  std::puts("ok");
  return 0;
}
