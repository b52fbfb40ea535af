// robust: yes
// race: no
// reason: copy-on-write string: copies take a reference with fetch_add(relaxed), a writer that is not the only owner copies and drops its reference with fetch_sub(acq_rel), the last owner (fetch_sub returned 1) frees; every access to the reference count is an RMW (reads the latest value) and the acq_rel drop orders the other owners' reads of the characters before the free
// C++: a minimal reference-counted copy-on-write string shared by three threads; each copies, two mutate their copy.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>

struct Rep {
  std::atomic<int> refs;
  char text[16];
};

class CowString {
  Rep *rep_;
  void release() {
    if (rep_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete rep_;
  }

 public:
  explicit CowString(const char *s) : rep_(new Rep) {
    rep_->refs.store(1, std::memory_order_relaxed);
    std::strncpy(rep_->text, s, sizeof rep_->text - 1);
    rep_->text[sizeof rep_->text - 1] = 0;
  }
  CowString(const CowString &o) : rep_(o.rep_) { rep_->refs.fetch_add(1, std::memory_order_relaxed); }
  CowString &operator=(const CowString &) = delete;
  ~CowString() { release(); }
  char at(int i) const { return rep_->text[i]; }
  void set(int i, char c) {
    if (rep_->refs.load(std::memory_order_acquire) != 1) { /* shared: copy first */
      Rep *copy = new Rep;
      copy->refs.store(1, std::memory_order_relaxed);
      std::memcpy(copy->text, rep_->text, sizeof copy->text);
      release();
      rep_ = copy;
    }
    rep_->text[i] = c;
  }
};

int main() {
  char out[3] = {0, 0, 0};
  {
    CowString *shared = new CowString("hello");
    std::thread t[3];
    for (int i = 0; i < 3; i++)
      t[i] = std::thread([shared, &out, i] {
        CowString mine(*shared);
        if (i < 2) mine.set(0, (char)('A' + i));
        out[i] = mine.at(0);
      });
    for (auto &th : t) th.join();
    delete shared;
  }
  std::printf("%c %c %c\n", out[0], out[1], out[2]);
  return out[0] == 'A' && out[1] == 'B' && out[2] == 'h' ? 0 : 1;
}
