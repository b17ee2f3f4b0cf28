// attach_prog_cxx.cc — the C++ counterpart of attach_prog.c for cprof attach:
//   attach_prog_cxx DIR
// before_attach() keeps objects made with new; DIR/ready; waits for DIR/go.
// After the attach, four std::threads allocate with new (site_new: kept
// arrays; site_objects: objects deleted again), two fight over a std::mutex,
// main deletes the objects from before the attach; DIR/phase2; spin() until
// DIR/finish; then the truth of the sites and a checksum, as attach_prog.c.
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace {
const int OLD = 1000, THREADS = 4, KEEP = 100, CHURN = 1000;
std::string dir;
char *old_blocks[OLD];
char *kept[THREADS][KEEP];
unsigned long checksum;
std::mutex sum_lock, fight_lock;

struct Obj {
  long a[12]; // 96 bytes
};

template <typename T> T *E(T *p) {
  __asm__ volatile("" : : "g"(p) : "memory");
  return p;
}

bool exists(const char *name) { return access((dir + "/" + name).c_str(), F_OK) == 0; }

void touch(const char *name) {
  if (FILE *f = fopen((dir + "/" + name).c_str(), "w"))
    fclose(f);
}

void wait_for(const char *name) {
  struct timespec ts = {0, 10000000};
  while (!exists(name))
    nanosleep(&ts, nullptr);
}
} // namespace

NOINLINE void before_attach() {
  for (int i = 0; i < OLD; i++)
    old_blocks[i] = E(new char[700]());
}

NOINLINE void site_new(int t) {
  for (int i = 0; i < KEEP; i++)
    kept[t][i] = E(new char[4096]());
}

NOINLINE void site_objects(int t) {
  unsigned long s = 0;
  for (int i = 0; i < CHURN; i++) {
    Obj *o = E(new Obj());
    o->a[0] = i + t;
    s += (unsigned long)o->a[0];
    delete o;
  }
  std::lock_guard<std::mutex> g(sum_lock);
  // Atomic: fight() adds under another lock at the same time.
  __atomic_add_fetch(&checksum, s, __ATOMIC_RELAXED);
}

NOINLINE void fight() {
  for (int i = 0; i < 200; i++) {
    std::lock_guard<std::mutex> g(fight_lock);
    struct timespec ts = {0, 100000};
    nanosleep(&ts, nullptr);
    __atomic_add_fetch(&checksum, 1, __ATOMIC_RELAXED);
  }
}

NOINLINE void spin() {
  volatile unsigned long x = 0;
  while (!exists("finish"))
    for (int i = 0; i < 2000000; i++)
      x += (unsigned long)i * 7;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: attach_prog_cxx DIR\n");
    return 2;
  }
  dir = argv[1];
  before_attach();
  touch("ready");
  wait_for("go");
  std::vector<std::thread> th;
  th.reserve(THREADS); // before the threads: no reallocation among them
  for (int t = 0; t < THREADS; t++)
    th.emplace_back([t] {
      site_new(t);
      site_objects(t);
      if (t < 2)
        fight();
    });
  for (int i = 0; i < OLD; i++) {
    checksum += (unsigned char)old_blocks[i][i % 700];
    delete[] old_blocks[i];
  }
  for (auto &x : th)
    x.join();
  touch("phase2");
  spin();
  for (int t = 0; t < THREADS; t++)
    for (int i = 0; i < KEEP; i++) {
      checksum += (unsigned char)kept[t][i][i];
      delete[] kept[t][i];
    }
  printf("TRUTH site_new %d %d %d %d\n", THREADS * KEEP, THREADS * KEEP * 4096, THREADS * KEEP,
         THREADS * KEEP * 4096);
  printf("TRUTH site_objects %d %d 0 0\n", THREADS * CHURN, THREADS * CHURN * (int)sizeof(Obj));
  printf("TRUTH before_attach 0 0 0 0\n");
  printf("checksum %lu\n", checksum);
  return 0;
}
