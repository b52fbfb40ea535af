/* One plain-access shape per section; mark() (plain_marker.c, not instrumented) starts a
 * section and names the object it touches. test_passes_plain_end_to_end.py checks that the
 * hooks of each section are exactly the expected (kind, object, size) at -O0 and -O1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mark(const char *section, const void *object, unsigned long size);

struct record { long id; int count; char tag[12]; };
typedef int int4 __attribute__((vector_size(16)));

int g_int;
char g_char = 'c';
long g_long;
long double g_ld;
struct record g_rec1 = {1, 2, "one"}, g_rec2;
int4 g_vec1 = {1, 2, 3, 4}, g_vec2;
char g_buf1[64], g_buf2[64];
char g_str1[16], g_str2[16];
int *g_ptr;
static const int g_table[8] = {3, 1, 4, 1, 5, 9, 2, 6};

__attribute__((noinline)) void store_int(int v) { g_int = v; }
__attribute__((noinline)) int load_char(void) { return g_char; }
__attribute__((noinline)) void add_long(long v) { g_long += v; }
__attribute__((noinline)) void store_long_double(long double v) { g_ld = v; }
__attribute__((noinline)) void copy_struct(void) { g_rec2 = g_rec1; }
__attribute__((noinline)) void copy_vector(void) { g_vec2 = g_vec1; }
__attribute__((noinline)) void clear_buffer(void) { memset(g_buf1, 0, sizeof g_buf1); }
__attribute__((noinline)) int compare_buffers(void) {
  g_buf2[5] = 1;  /* memcmp stops after 6 bytes */
  return memcmp(g_buf1, g_buf2, 16);
}
__attribute__((noinline)) int read_table(int i) { return g_table[i & 7]; }
__attribute__((noinline)) void copy_string(void) { strcpy(g_str1, "hello"); }
__attribute__((noinline)) size_t string_length(void) { return strlen(g_str1); }
__attribute__((noinline)) void copy_string_bounded(void) { strncpy(g_str2, g_str1, 10); }
__attribute__((noinline)) int compare_strings(void) { return strcmp(g_str1, g_str2); }

__attribute__((noinline)) int private_local(int n) {
  int scratch[8];
  for (int i = 0; i < 8; i++) scratch[i] = i * n;
  int sum = 0;
  for (int i = 0; i < 8; i++) sum += scratch[i];
  return sum;
}

__attribute__((noinline)) void publish(int *p) { g_ptr = p; }

__attribute__((noinline)) int escaping_local(int n) {
  int shared = n;
  publish(&shared);
  mark("escaping_local", &shared, sizeof shared);
  shared = n + 1;
  return *g_ptr;
}

int main(int argc, char **argv) {
  (void)argv;
  /* the objects' addresses, for the test ("@" sections make no hooks) */
  mark("@g_rec2", &g_rec2, sizeof g_rec2);
  mark("@g_vec2", &g_vec2, sizeof g_vec2);
  mark("@g_buf2", g_buf2, sizeof g_buf2);
  mark("@g_str2", g_str2, sizeof g_str2);
  mark("@g_ptr", &g_ptr, sizeof g_ptr);
  mark("store_int", &g_int, sizeof g_int);
  store_int(argc + 41);
  mark("load_char", &g_char, sizeof g_char);
  int c = load_char();
  mark("add_long", &g_long, sizeof g_long);
  add_long(argc);
  mark("store_long_double", &g_ld, 10);
  store_long_double(argc * 1.5L);
  mark("copy_struct", &g_rec1, sizeof g_rec1);
  copy_struct();
  mark("copy_vector", &g_vec1, sizeof g_vec1);
  copy_vector();
  mark("clear_buffer", g_buf1, sizeof g_buf1);
  clear_buffer();
  mark("compare_buffers", g_buf1, 6);
  int cmp = compare_buffers();
  mark("read_table", g_table, sizeof g_table);
  int t = read_table(argc + 2);
  mark("copy_string", g_str1, 6);
  copy_string();
  mark("string_length", g_str1, 6);
  size_t len = string_length();
  mark("copy_string_bounded", g_str1, 6);
  copy_string_bounded();
  mark("poke", g_str1 + 3, 1);
  g_str1[3] = '!';  /* "hel!o" against "hello": strcmp stops after 4 bytes */
  mark("compare_strings", g_str1, 4);
  int scmp = compare_strings();
  mark("private_local", NULL, 0);
  int sum = private_local(argc);
  mark("escaping_setup", &g_ptr, sizeof g_ptr);
  int esc = escaping_local(argc);
  mark("end", NULL, 0);
  printf("int=%d char=%c long=%ld ld=%.1Lf id=%ld vec=%d cmp=%d t=%d len=%zu scmp=%d sum=%d esc=%d\n",
         g_int, c, g_long, g_ld, g_rec2.id, g_vec2[3], cmp, t, len, scmp < 0, sum, esc);
  return 0;
}
