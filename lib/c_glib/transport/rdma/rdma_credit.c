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

/* rdma_credit.c: credit bookkeeping (see rdma_credit.h). */
#include "config.h"

#include "rdma_credit.h"

void
rdma_credit_init (RdmaCredits *c, guint32 local_slots, guint32 peer_slots)
{
  c->send = peer_slots;
  c->send_max = peer_slots;
  c->in_flight = 0;
  c->pending = 0;
  c->local = local_slots;
}

gboolean
rdma_credit_take (RdmaCredits *c)
{
  if (c->send == 0)
    return FALSE;
  c->send--;
  c->in_flight++;
  return TRUE;
}

gboolean
rdma_credit_grant (RdmaCredits *c, guint32 n)
{
  if (n > c->in_flight)
    return FALSE;
  c->in_flight -= n;
  c->send += n;
  return TRUE;
}

void
rdma_credit_slot_freed (RdmaCredits *c)
{
  c->pending++;
}

guint32
rdma_credit_piggyback (RdmaCredits *c)
{
  guint32 n = c->pending;
  c->pending = 0;
  return n;
}

guint32
rdma_credit_piggyback_max (RdmaCredits *c, guint32 max)
{
  guint32 n = MIN (c->pending, max);
  c->pending -= n;
  return n;
}

gboolean
rdma_credit_need_explicit (const RdmaCredits *c)
{
  guint32 half = c->local / 2 > 0 ? c->local / 2 : 1;
  return c->pending >= half;
}
