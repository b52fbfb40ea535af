target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

define i32 @rmw_umin(ptr %p, i32 %v) {
  %r = atomicrmw umin ptr %p, i32 %v seq_cst, align 4
  ret i32 %r
}
define i32 @rmw_uinc_wrap(ptr %p, i32 %v) {
  %r = atomicrmw volatile uinc_wrap ptr %p, i32 %v monotonic, align 4
  ret i32 %r
}
define i16 @rmw_udec_wrap(ptr %p, i16 %v) {
  %r = atomicrmw udec_wrap ptr %p, i16 %v acquire, align 2
  ret i16 %r
}
define i64 @rmw_usub_cond(ptr %p, i64 %v) {
  %r = atomicrmw usub_cond ptr %p, i64 %v release, align 8
  ret i64 %r
}
define i8 @rmw_usub_sat(ptr %p, i8 %v) {
  %r = atomicrmw usub_sat ptr %p, i8 %v acq_rel, align 1
  ret i8 %r
}
define float @rmw_fmax(ptr %p, float %v) {
  %r = atomicrmw fmax ptr %p, float %v seq_cst, align 4
  ret float %r
}
define double @rmw_fmin(ptr %p, double %v) {
  %r = atomicrmw fmin ptr %p, double %v seq_cst, align 8
  ret double %r
}
define float @rmw_fmaximum(ptr %p, float %v) {
  %r = atomicrmw fmaximum ptr %p, float %v syncscope("singlethread") seq_cst, align 4
  ret float %r
}
define double @rmw_fminimum(ptr %p, double %v) {
  %r = atomicrmw fminimum ptr %p, double %v seq_cst, align 8
  ret double %r
}
define ptr @rmw_xchg_ptr(ptr %p, ptr %v) {
  %r = atomicrmw xchg ptr %p, ptr %v acq_rel, align 8
  ret ptr %r
}
define i8 @load_unordered(ptr %p) {
  %r = load atomic volatile i8, ptr %p unordered, align 1
  ret i8 %r
}
define void @store_flag(ptr %p, i8 %v) {
  store atomic volatile i8 %v, ptr %p syncscope("singlethread") monotonic, align 1, !nontemporal !{i32 1}
  ret void
}
define i8 @"load$flag"(ptr %p) {
  %"r.q" = load atomic i8, ptr %p seq_cst, align 1
  ret i8 %"r.q"
}
define ptr @cas_ptr(ptr %p, ptr %e, ptr %d) {
  %pair = cmpxchg weak volatile ptr %p, ptr %e, ptr %d syncscope("singlethread") acquire monotonic, align 8
  %old = extractvalue { ptr, i1 } %pair, 0
  ret ptr %old
}
define i8 @cas_i8(ptr %p, i8 %e, i8 %d) {
  %pair = cmpxchg ptr %p, i8 %e, i8 %d release monotonic, align 1
  %old = extractvalue { i8, i1 } %pair, 0
  %ok = extractvalue { i8, i1 } %pair, 1
  %okx = zext i1 %ok to i8
  %sum = add i8 %old, %okx
  ret i8 %sum
}
