/* Module registry: the site tables and globals that instrumented modules register from a
 * constructor (rsan_interface.h, __rsan_register_module). Site id = id_prefix | index. */
#include <string.h>
#include <unistd.h>

#include "rsan_internal.h"

static rsan_spin mod_lock;
static const rsan_module **mods;
static uint32_t nmods, capmods;
static int warned_collision;
/* Changes whenever the registry does (a module registered, the test reset): a site record
 * found under one generation is what the same id means until the next (mod_lock held). */
static uint64_t generation = 1;

static void warn_collision(const rsan_module *a, const rsan_module *b) {
  if (__atomic_exchange_n(&warned_collision, 1, __ATOMIC_RELAXED)) return;
  char buf[1200];
  size_t n = 0;
  const char *parts[] = {"pyrsan: warning: site id prefix collision between modules '",
                         a->name ? a->name : "?", "' and '", b->name ? b->name : "?",
                         "'; report locations may be wrong\n"};
  for (unsigned i = 0; i < 5; i++)
    for (const char *s = parts[i]; *s && n < sizeof buf - 2; s++) buf[n++] = *s;
  (void)!write(2, buf, n);
}

RSAN_EXPORT void __rsan_register_module(const rsan_module *m) {
  if (!m) return;
  rsan_ensure_init();
  if (m->abi_version != RSAN_ABI_VERSION) {
    static const char msg[] = "pyrsan: module built for another runtime ABI version; ignored\n";
    (void)!write(2, msg, sizeof msg - 1);
    return;
  }
  const rsan_module *clash = NULL;
  rsan_spin_lock(&mod_lock);
  for (uint32_t i = 0; i < nmods; i++) {
    if (mods[i] == m) { /* registered twice (e.g. constructor run again): keep one */
      rsan_spin_unlock(&mod_lock);
      return;
    }
    if (mods[i]->id_prefix == m->id_prefix) clash = mods[i];
  }
  if (nmods == capmods) {
    capmods = capmods ? capmods * 2 : 16;
    mods = rsan_realloc((void *)mods, capmods * sizeof(*mods));
  }
  mods[nmods++] = m;
  __atomic_fetch_add(&generation, 1, __ATOMIC_RELEASE);
  rsan_spin_unlock(&mod_lock);
  if (clash) warn_collision(clash, m);
}

const rsan_site *rsan_site_lookup(uint64_t site) { return rsan_site_lookup_gen(site, NULL); }

const rsan_site *rsan_site_lookup_gen(uint64_t site, uint64_t *gen) {
  if (gen) *gen = 0;
  if (!site) return NULL;
  uint64_t prefix = site & ~0xffffffffull;
  uint32_t index = (uint32_t)site;
  const rsan_site *s = NULL;
  rsan_spin_lock(&mod_lock);
  for (uint32_t i = 0; i < nmods; i++) {
    if (mods[i]->id_prefix == prefix && index < mods[i]->nsites) {
      s = &mods[i]->sites[index];
      break;
    }
  }
  if (gen) *gen = generation;
  rsan_spin_unlock(&mod_lock);
  return s;
}

/* Without the lock: the repeat cache (report_robustness.c) compares it before and after it
 * computes a key; the generation only grows */
uint64_t rsan_sites_generation(void) { return __atomic_load_n(&generation, __ATOMIC_ACQUIRE); }

const char *rsan_global_lookup(uintptr_t addr, uint64_t *off) {
  const char *name = NULL;
  rsan_spin_lock(&mod_lock);
  for (uint32_t i = 0; i < nmods && !name; i++) {
    const rsan_module *m = mods[i];
    for (uint32_t g = 0; g < m->nglobals; g++) {
      uintptr_t a = (uintptr_t)m->globals[g].addr;
      uint64_t sz = m->globals[g].size ? m->globals[g].size : 1;
      if (addr >= a && addr - a < sz) {
        name = m->globals[g].name;
        *off = addr - a;
        break;
      }
    }
  }
  rsan_spin_unlock(&mod_lock);
  return name;
}

void rsan_sites_reset(void) {
  rsan_spin_lock(&mod_lock);
  nmods = 0;
  __atomic_fetch_add(&generation, 1, __ATOMIC_RELEASE);
  warned_collision = 0;
  rsan_spin_unlock(&mod_lock);
}

/* fork (rsan_fork.h) */
void rsan_sites_fork_lock(void) { rsan_spin_lock(&mod_lock); }
void rsan_sites_fork_unlock(void) { rsan_spin_unlock(&mod_lock); }
