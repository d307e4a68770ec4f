/*
 * gate_handler.h: the Gate handler of the threaded server tests (test/server over TCP,
 * test/rdma over RDMA): gather(n, timeout_ms) waits until n calls are inside at once (or the
 * timeout) and returns the most it saw; echo returns its data; ping returns x + 1.
 */
#ifndef _GATE_HANDLER_H
#define _GATE_HANDLER_H

#include "gate.h"

G_BEGIN_DECLS

GType test_gate_get_type (void);

/* The most gather calls inside at once since the last reset. */
void test_gate_reset_peak (void);
gint test_gate_peak (void);

G_END_DECLS

#endif
