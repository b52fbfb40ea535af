/* The closure search's set of visited state keys (sched_closure_search.c asks it at every
 * branching state). A state seen before with sleep set Z_old needs no new visit with sleep set
 * Z when Z_old ⊆ Z (the earlier visit explored every fence this one would; Godefroid's state
 * caching with sleep sets). */
#include "rsan_internal.h"
#include "rsan_sched_closure_internal.h"

static uint64_t *kt_keys, *kt_masks; /* the set: shared by forks, else this process's own */
static uint32_t kt_cap, kt_n;

static int key_put(uint64_t key, uint64_t sleep) {
  uint32_t i = (uint32_t)(key >> 40) & (kt_cap - 1);
  for (uint32_t probes = 0; probes < kt_cap; probes++, i = (i + 1) & (kt_cap - 1)) {
    if (kt_keys[i] == key) {
      if ((kt_masks[i] & ~sleep) == 0) return 0;
      kt_masks[i] &= sleep;
      return 1;
    }
    if (!kt_keys[i]) {
      kt_keys[i] = key;
      kt_masks[i] = sleep;
      kt_n++;
      return 1;
    }
  }
  return 1; /* full: no pruning (the state budget ends the search) */
}

/* A private set grows at half full (fresh memory costs a page fault a page: it starts small) */
static void key_grow(void) {
  uint64_t *keys = kt_keys, *masks = kt_masks;
  uint32_t cap = kt_cap;
  kt_cap = cap ? 2 * cap : 4096;
  kt_keys = rsan_alloc((size_t)kt_cap * sizeof *kt_keys);
  kt_masks = rsan_alloc((size_t)kt_cap * sizeof *kt_masks);
  kt_n = 0;
  for (uint32_t i = 0; i < cap; i++)
    if (keys[i]) key_put(keys[i], masks[i]);
  rsan_free(keys);
  rsan_free(masks);
}

/* 1 when the state must be explored (and its mask becomes Z_old ∩ Z). in_process: the search
 * restores states in this process (a private set, grown here), else the forks share the run's
 * mapped set (rsan_closure_sh) */
int rsan_closure_key_visit(uint64_t key, uint64_t sleep, int in_process) {
  if (!in_process && !kt_keys) {
    kt_keys = rsan_closure_sh->keys;
    kt_masks = rsan_closure_sh->masks;
    kt_cap = KEY_SLOTS;
  }
  if (in_process && 2 * (kt_n + 1) > kt_cap) key_grow(); /* a private set (the root's mode) */
  return key_put(key, sleep);
}
