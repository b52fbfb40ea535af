/* The compact location record (docs/design/clocks.md §21): which COLD records fit one, and
 * the moves of a location's state between the two layouts. location.c finds, links, retires
 * and locks the records; these only move state, with both records locked, the compact one
 * never reachable by a rule. Each move is exact: a COLD record that fits has every field but
 * those a compact record keeps at its cleared value (location.c loc_clear_state), so the
 * record that unpack fills (a cleared one) holds the same state as the one pack read. */
#include <string.h>

#include "rsan_internal.h"

/* Msc's kind in a compact record, -1 when it has none (docs/design/clocks.md §21) */
static int msc_kind(const rsan_clk *c) {
  if (rsan_clk_shared(c)) {
    if (!c->ver) return -1;
    for (int i = 1; i < RSAN_CLK_DELTA; i++) /* (the others unused, as rsan_clk_init leaves them) */
      if (c->u.s.slot[i] || c->u.s.ep[i]) return -1;
    return RSAN_MSC_SNAP;
  }
  if (!c->ver) return c->n == 0 ? RSAN_MSC_BOTTOM : -1;
  if (c->cap > RSAN_CLK_INLINE || c->n > 4) return -1;
  for (int i = 0; i < RSAN_CLK_INLINE; i++)
    if (c->u.inl[i] > (i < 4 ? UINT32_MAX : 0)) return -1; /* (entries from 4 on are 0) */
  return RSAN_MSC_INLINE;
}

int rsan_loc_fits_compact(const rsan_loc *l) {
  if (l->cls != RSAN_LOC_COLD || l->retired || l->nocheck || l->msc_wsc || l->grow) return 0;
  if (l->fcap != RSAN_FACTS || l->fold || l->nfacts > RSAN_LOC_COMPACT_FACTS) return 0;
  if (l->stamp || l->stampU || l->hist || l->hist_next) return 0; /* never written */
  if (l->ev && rsan_loc_evdirect(l)) return 0; /* (a sparse table with fold = 0 is empty) */
  for (int i = 0; i < RSAN_EV_SLOTS; i++)
    if (l->evslot[i]) return 0;
  if (l->S.n || l->S.e || l->S.cap) return 0; /* S_x = ⊥ */
  return msc_kind(&l->Msc) >= 0;
}

void rsan_loc_pack(rsan_loc_compact *n, rsan_loc *o) {
  RSAN_ASSERT(rsan_loc_fits_compact(o) && n->msc_kind == RSAN_MSC_BOTTOM);
  n->init_known = o->init_known;
  n->nfacts = (uint8_t)o->nfacts;
  __atomic_store_n(&n->addr, o->addr, __ATOMIC_RELAXED); /* (lock-free chain walks read it) */
  n->id = o->id;
  n->msc_in = o->msc_in;
  n->init_value = o->init_value;
  memcpy(n->facts, o->facts_inline, o->nfacts * sizeof(rsan_fact)); /* the window [0, nfacts) */
  rsan_clk *m = &o->Msc;
  int k = msc_kind(m);
  n->msc_kind = (uint8_t)k;
  n->msc_n = m->n;
  n->msc_ver = m->ver;
  if (k == RSAN_MSC_SNAP) {
    n->msc_snap = m->u.s.snap;
    n->msc_dslot = m->u.s.slot[0];
    n->msc_dep = m->u.s.ep[0];
    rsan_clk_init(m); /* the snapshot's reference is n's now */
  } else if (k == RSAN_MSC_INLINE) {
    n->msc_cap = (uint8_t)m->cap;
    for (int i = 0; i < 4; i++) n->msc_e[i] = (uint32_t)m->u.inl[i];
  }
}

void rsan_loc_unpack(rsan_loc *n, rsan_loc_compact *o) {
  RSAN_ASSERT(o->cls == RSAN_LOC_COMPACT && n->cls != RSAN_LOC_COMPACT && !n->nfacts && !n->stamp);
  n->retired = 0;
  n->init_known = o->init_known;
  n->nfacts = o->nfacts;
  __atomic_store_n(&n->addr, o->addr, __ATOMIC_RELAXED);
  n->id = o->id;
  n->msc_in = o->msc_in;
  n->init_value = o->init_value;
  memcpy(n->facts_inline, o->facts, o->nfacts * sizeof(rsan_fact));
  if (o->msc_kind != RSAN_MSC_BOTTOM) { /* (a cleared record's Msc is ⊥) */
    rsan_clk_release(&n->Msc);
    n->Msc.n = o->msc_n;
    n->Msc.ver = o->msc_ver;
    if (o->msc_kind == RSAN_MSC_SNAP) {
      n->Msc.cap = RSAN_CLK_SHARED; /* differences 1.. unused: 0 (rsan_clk_init) */
      n->Msc.u.s.snap = o->msc_snap;
      n->Msc.u.s.slot[0] = o->msc_dslot;
      n->Msc.u.s.ep[0] = o->msc_dep;
    } else {
      n->Msc.cap = o->msc_cap;
      for (int i = 0; i < 4; i++) n->Msc.u.inl[i] = o->msc_e[i];
    }
  }
  o->msc_kind = RSAN_MSC_BOTTOM; /* o owns nothing now */
  o->msc_snap = NULL;
}

void rsan_loc_compact_clear(rsan_loc_compact *c) {
  if (c->msc_kind == RSAN_MSC_SNAP) { /* drop its reference (rsan_clk_release of that clock) */
    rsan_clk k;
    rsan_clk_init(&k);
    k.cap = RSAN_CLK_SHARED;
    k.u.s.snap = c->msc_snap;
    rsan_clk_release(&k);
  }
  c->msc_kind = RSAN_MSC_BOTTOM;
  c->msc_cap = 0;
  c->msc_n = 0;
  c->msc_ver = 0;
  memset(c->msc_e, 0, sizeof c->msc_e);
  c->msc_in = 0;
  c->nfacts = 0;
  c->init_known = 0;
  c->init_value = 0;
  c->fcap = RSAN_FACTS;
}
