/*
 * Copyright 2026 The thrift-c-glib-rdma authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file
 * except in compliance with the License. You may obtain a copy of the License at
 *
 *   http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the
 * License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND,
 * either express or implied. See the License for the specific language governing permissions
 * and limitations under the License.
 */

/*
 * thrift_interruptible.h: waking a thread blocked on a transport, from another thread.
 *
 * A server that stops (ThriftThreadedServer) must make its acceptor's accept and its
 * workers' peeks and reads return before it can join them, without closing what they still
 * use: closing a descriptor would let its number be reused under them, closing a ThriftRdma
 * would free verbs resources they wait on.
 *
 * ThriftInterruptible is the interface a transport or server transport implements for this
 * (ThriftRdma, ThriftHybrid, ThriftServerRdma and ThriftServerHybrid do), so a server asks it
 * instead of knowing its type.  For stock transports, which cannot implement it,
 * thrift_interruptible_interrupt () knows ThriftSocket and ThriftServerSocket: shutdown (2) of
 * the descriptor wakes accept (EINVAL) and recv (end of file) at once and leaves the
 * descriptor to its owner to close (close (2) would not wake a thread blocked in accept on
 * Linux).
 */
#ifndef _THRIFT_INTERRUPTIBLE_H
#define _THRIFT_INTERRUPTIBLE_H

#include <glib-object.h>

G_BEGIN_DECLS

typedef struct _ThriftInterruptible ThriftInterruptible; /* dummy object */
typedef struct _ThriftInterruptibleInterface ThriftInterruptibleInterface;

/**
 * ThriftInterruptibleInterface:
 * @interrupt: makes an accept, peek, read or flush blocked on this object in another thread
 *   return at once, or the next one when none is blocked yet (the caller cannot tell): an
 *   accept, read or flush fails, a peek returns FALSE.  Called while another thread may be
 *   inside the object, so it frees and closes nothing: the thread that owns the object still
 *   closes it (which may end the interrupt's effect).  Must not block.
 */
struct _ThriftInterruptibleInterface
{
  GTypeInterface parent;

  void (*interrupt) (ThriftInterruptible *self);
};

GType thrift_interruptible_get_type (void);
#define THRIFT_TYPE_INTERRUPTIBLE (thrift_interruptible_get_type ())
#define THRIFT_INTERRUPTIBLE(obj) \
  (G_TYPE_CHECK_INSTANCE_CAST ((obj), THRIFT_TYPE_INTERRUPTIBLE, ThriftInterruptible))
#define THRIFT_IS_INTERRUPTIBLE(obj) (G_TYPE_CHECK_INSTANCE_TYPE ((obj), THRIFT_TYPE_INTERRUPTIBLE))
#define THRIFT_INTERRUPTIBLE_GET_INTERFACE(inst) \
  (G_TYPE_INSTANCE_GET_INTERFACE ((inst), THRIFT_TYPE_INTERRUPTIBLE, ThriftInterruptibleInterface))

/**
 * thrift_interruptible_interrupt:
 * @transport: a ThriftServerTransport, or a ThriftTransport as a server holds it (maybe under
 *   buffered, framed or zlib wrappers)
 *
 * Interrupts the ThriftInterruptible @transport is or wraps, or else shuts down the
 * descriptor of the ThriftSocket or ThriftServerSocket it is or wraps.
 *
 * Returns: TRUE if a blocked call on @transport now returns; FALSE (having done nothing)
 * for a transport it does not know how to wake, which the caller may close instead.
 */
gboolean thrift_interruptible_interrupt (GObject *transport);

G_END_DECLS

#endif /* _THRIFT_INTERRUPTIBLE_H */
