// robust: yes
// race: no
// reason: userspace-RCU-like grace periods with every atomic access seq_cst: a reader makes its epoch odd, reads the current pointer and uses the object, then makes its epoch even again; the writer swaps in a new object and waits, for each reader, until its epoch is even or has changed before deleting the old one. Programs whose atomics are all seq_cst are robust (sc_accesses=fenced); the reader's last use happens before its even epoch store (release), which the writer's load (acquire) reads before the delete
// Epoch-based reclamation of a config object (C++, heap, delete), two readers, one writer replacing it twice.
#include <atomic>
#include <cstdio>
#include <thread>

struct Conf {
  int x, y;
};
static std::atomic<Conf *> current;
static std::atomic<unsigned> epoch[2];
static long sums[2];

static void reader(int id) {
  for (int i = 0; i < 2; i++) {
    epoch[id].fetch_add(1);  // odd: inside
    Conf *c = current.load();
    sums[id] += c->x + c->y;
    epoch[id].fetch_add(1);  // even: outside
  }
}

static void synchronize() {
  for (auto &e : epoch) {
    unsigned snap = e.load();
    if (snap & 1)
      while (e.load() == snap) {
      }
  }
}

static void writer() {
  for (int i = 1; i <= 2; i++) {
    Conf *old = current.exchange(new Conf{i, -i});
    synchronize();
    delete old;
  }
}

int main() {
  current.store(new Conf{0, 0});
  std::thread r0(reader, 0), r1(reader, 1), w(writer);
  r0.join();
  r1.join();
  w.join();
  delete current.load();
  std::printf("%ld\n", sums[0] + sums[1]);
  return 0;
}
