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

/* rdma_lend_cost.c: a large field lent or copied by measured cost (see rdma_lend_cost.h). */
#include "config.h"

#include "rdma_lend_cost.h"

enum { LEND, COPY };

typedef struct
{
  guint us[2], n[2];      /* a call's average time by each way, and its samples */
  RdmaChoice choice;      /* lending the prior, copying the alternative */
} SizeClass;

struct _RdmaLendCost
{
  GMutex lock;
  SizeClass cls[RDMA_LEND_COST_CLASSES];
};

static guint
class_of (gsize len)
{
  guint bits = g_bit_storage (len);   /* 4 KiB: 13 */

  return bits <= 13 ? 0 : MIN (bits - 13, RDMA_LEND_COST_CLASSES - 1);
}

RdmaLendCost *
rdma_lend_cost_new (void)
{
  RdmaLendCost *c = g_new0 (RdmaLendCost, 1);

  g_mutex_init (&c->lock);
  return c;
}

void
rdma_lend_cost_free (RdmaLendCost *c)
{
  if (c == NULL)
    return;
  g_mutex_clear (&c->lock);
  g_free (c);
}

gboolean
rdma_lend_cost_choose (RdmaLendCost *c, gsize len, RdmaLendTicket *t)
{
  SizeClass *s;

  t->cls = class_of (len);
  s = &c->cls[t->cls];
  g_mutex_lock (&c->lock);
  t->copy = rdma_choice_next (&s->choice, s->us[LEND], s->us[COPY]);
  t->learn = !s->choice.settling;
  g_mutex_unlock (&c->lock);
  t->open = TRUE;
  t->since = g_get_monotonic_time ();
  return !t->copy;
}

void
rdma_lend_cost_end (RdmaLendCost *c, RdmaLendTicket *t, gint64 now)
{
  SizeClass *s;
  guint way;

  if (!t->open)
    return;
  t->open = FALSE;
  if (!t->learn || c == NULL)
    return;
  s = &c->cls[t->cls];
  way = t->copy ? COPY : LEND;
  g_mutex_lock (&c->lock);
  rdma_choice_average (&s->us[way], &s->n[way], now - t->since, RDMA_LEND_COST_MAX_US);
  g_mutex_unlock (&c->lock);
}

gboolean
rdma_lend_cost_copies (RdmaLendCost *c, gsize len)
{
  gboolean copies;

  g_mutex_lock (&c->lock);
  copies = c->cls[class_of (len)].choice.alt;
  g_mutex_unlock (&c->lock);
  return copies;
}

static void
append_size (GString *s, guint k)
{
  /* class k holds 2^(12+k) up to 2^(13+k) bytes (the last: and over) */
  guint lo = 12 + k;

  if (k == RDMA_LEND_COST_CLASSES - 1)
    g_string_append_printf (s, "%u MiB and more", 1u << (lo - 20));
  else if (lo >= 20)
    g_string_append_printf (s, "%u-%u MiB", 1u << (lo - 20), 1u << (lo - 19));
  else if (lo == 19)
    g_string_append (s, "512 KiB-1 MiB");
  else
    g_string_append_printf (s, "%u-%u KiB", 1u << (lo - 10), 1u << (lo - 9));
}

gchar *
rdma_lend_cost_describe (RdmaLendCost *c)
{
  GString *s = g_string_new (NULL);

  g_mutex_lock (&c->lock);
  for (guint k = 0; k < RDMA_LEND_COST_CLASSES; k++) {
    const SizeClass *z = &c->cls[k];

    if (z->choice.calls == 0)
      continue;
    g_string_append (s, s->len == 0 ? "large fields lent or copied by call time: " : "; ");
    append_size (s, k);
    for (guint way = LEND; way <= COPY; way++) {
      g_string_append (s, way == LEND ? " lent " : ", copied ");
      if (z->us[way] == 0)
        g_string_append (s, "not measured yet");
      else
        g_string_append_printf (s, "%u us", z->us[way]);
    }
    g_string_append_printf (s, " (over %u calls): %s, %u change%s", z->choice.calls,
                            z->choice.alt ? "copies" : "lends", z->choice.switches,
                            z->choice.switches == 1 ? "" : "s");
  }
  g_mutex_unlock (&c->lock);
  if (s->len == 0) {
    g_string_free (s, TRUE);
    return NULL;
  }
  return g_string_free (s, FALSE);
}
