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

enum
{
  LEND,
  COPY
};

typedef struct
{
  guint us[2], n[2]; /* time per call by each way (between choices), and its samples */
  guint others16;    /* choices made meanwhile by a call's peers, averaged, x 16 */
  guint open;        /* calls open now */
  gint64 idle_since; /* when the last open call ended (0: none yet) */
  gint64 idle;       /* time with no call open, in all (us) */
  gboolean win_open; /* a window of choices is being timed */
  gboolean win_copy; /* the way its calls took */
  guint win_calls;   /* the choices made when it began */
  guint64 bytes;     /* the chosen calls' fields, in all (the linear class's) */
  guint64 win_bytes; /* bytes when it began */
  gint64 win_since;  /* when it began (us) */
  gint64 win_idle;   /* idle when it began */
  RdmaChoice choice; /* lending the prior, copying the alternative */
} SizeClass;

struct _RdmaLendCost
{
  GMutex lock;
  SizeClass cls[RDMA_LEND_COST_CLASSES];
  gboolean staged; /* a book of staging (rdma_bulk_stage.h): says "staged" for "lent" */
};

static guint
class_of (gsize len)
{
  guint bits = g_bit_storage (len); /* 4 KiB: 13 */

  return bits <= 13 ? 0 : MIN (bits - 13, RDMA_LEND_COST_CLASSES - 1);
}
G_STATIC_ASSERT (RDMA_LEND_COST_LINEAR == 4096u << (RDMA_LEND_COST_CLASSES - 1));

static gboolean
is_linear (const RdmaLendCost *c, const SizeClass *s)
{
  return s == &c->cls[RDMA_LEND_COST_CLASSES - 1];
}

RdmaLendCost *
rdma_lend_cost_new (void)
{
  RdmaLendCost *c = g_new0 (RdmaLendCost, 1);

  g_mutex_init (&c->lock);
  return c;
}

void
rdma_lend_cost_set_staged (RdmaLendCost *c)
{
  c->staged = TRUE;
}

void
rdma_lend_cost_free (RdmaLendCost *c)
{
  if (c == NULL)
    return;
  g_mutex_clear (&c->lock);
  g_free (c);
}

RdmaLendCost *
rdma_lend_cost_for_device (const gchar *name, gboolean staged)
{
  static GMutex lock;
  static GHashTable *books; /* device name, with " staged" for staging (owned) ->
                               RdmaLendCost * (owned): never freed */
  g_autofree gchar *key = g_strconcat (name, staged ? " staged" : NULL, NULL);
  RdmaLendCost *c;

  g_mutex_lock (&lock);
  if (books == NULL)
    books = g_hash_table_new (g_str_hash, g_str_equal);
  c = g_hash_table_lookup (books, key);
  if (c == NULL)
  {
    c = rdma_lend_cost_new ();
    if (staged)
      rdma_lend_cost_set_staged (c);
    g_hash_table_insert (books, g_steal_pointer (&key), c);
  }
  g_mutex_unlock (&lock);
  return c;
}

/* A window's time per call is learnt for the way its calls took: its time with calls open
 * (a caller's pauses between calls are not the way's), over its calls (@linear: over its
 * MiB). */
static void
window_end (SizeClass *s, gboolean linear, gint64 now)
{
  guint calls = s->choice.calls - s->win_calls;
  guint64 mib16 = (s->bytes - s->win_bytes) * 16 / RDMA_LEND_COST_LINEAR;

  if (s->win_open && calls > 0 && (!linear || mib16 > 0))
  {
    guint way = s->win_copy ? COPY : LEND;
    gint64 busy = MAX (now - s->win_since - (s->idle - s->win_idle), 0);

    rdma_choice_average (&s->us[way], &s->n[way],
                         linear ? (gint64) ((guint64) busy * 16 / mib16) : busy / calls,
                         RDMA_LEND_COST_MAX_US, RDMA_LEND_COST_REACH);
  }
  s->win_open = FALSE;
}

static void
window_begin (SizeClass *s, gint64 now, gboolean copy)
{
  s->win_open = TRUE;
  s->win_copy = copy;
  s->win_calls = s->choice.calls;
  s->win_bytes = s->bytes;
  s->win_since = now;
  s->win_idle = s->idle;
}

gboolean
rdma_lend_cost_choose (RdmaLendCost *c, gsize len, gint64 now, RdmaLendTicket *t)
{
  SizeClass *s;
  guint phase, run;
  gboolean alt;

  t->cls = class_of (len);
  s = &c->cls[t->cls];
  g_mutex_lock (&c->lock);
  /* no run of the other way at the first calls (rdma_lend_cost.h): it would not be learnt */
  if (s->choice.calls == 0)
    rdma_choice_defer_first_run (&s->choice);
  if (s->open++ == 0 && s->idle_since > 0)
    s->idle += MAX (now - s->idle_since, 0);
  phase = s->choice.since;
  alt = s->choice.alt;
  t->copy = rdma_choice_next (&s->choice, s->us[LEND], s->us[COPY]);
  run = s->choice.run;
  /* the other way: the second half of its run, when the calls in flight are its own; the way
   * in use: from half a run after the run, when the run's calls are over, for up to
   * RDMA_LEND_COST_SPAN runs' length (to the next run if that comes first), so that what it
   * costs now and then (a stall of a retransmission) is in its time */
  if (alt != s->choice.alt)
    s->win_open = FALSE; /* the way changed in the window: neither's */
  else if (s->win_open
           && (phase == run || phase == 0
               || s->choice.calls - s->win_calls >= RDMA_LEND_COST_SPAN * run))
    window_end (s, is_linear (c, s), now);
  else if (!s->win_open && ((phase == run / 2 && s->choice.calls > run) || phase == run + run / 2))
    window_begin (s, now, t->copy); /* (not in a run at the first calls: a process's first
                                       * calls come in a burst as its threads start, or slowly
                                       * while their connections are still made, 11 ms a call
                                       * at 64) */
  s->bytes += len; /* (after the window's bounds: a window holds the calls it began with) */
  t->calls_then = s->choice.calls;
  g_mutex_unlock (&c->lock);
  t->open = TRUE;
  return !t->copy;
}

void
rdma_lend_cost_end (RdmaLendCost *c, RdmaLendTicket *t, gint64 now)
{
  SizeClass *s;
  guint others;

  if (!t->open)
    return;
  t->open = FALSE;
  if (c == NULL)
    return;
  s = &c->cls[t->cls];
  g_mutex_lock (&c->lock);
  /* the calls in flight beside this one: what the other callers chose while it ran (an
   * eighth-average; not rdma_choice_average, whose cap at twice the average is for stalls) */
  others = MIN (s->choice.calls - t->calls_then, RDMA_CHOICE_RUN_MAX) * 16;
  s->others16 = others >= s->others16 ? s->others16 + (others - s->others16 + 7) / 8
                                      : s->others16 - (s->others16 - others) / 8;
  rdma_choice_set_in_flight (&s->choice, s->others16 / 16);
  if (s->open > 0 && --s->open == 0)
    s->idle_since = now;
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
    g_string_append_printf (s, "%u MiB and more, per MiB,", 1u << (lo - 20));
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
  const gchar *lent = c->staged ? "staged" : "lent";
  GString *s = g_string_new (NULL);

  g_mutex_lock (&c->lock);
  for (guint k = 0; k < RDMA_LEND_COST_CLASSES; k++)
  {
    const SizeClass *z = &c->cls[k];

    if (z->choice.calls == 0)
      continue;
    if (s->len == 0)
      g_string_append_printf (s, "large fields %s or copied by time per call: ", lent);
    else
      g_string_append (s, "; ");
    append_size (s, k);
    for (guint way = LEND; way <= COPY; way++)
    {
      if (way == LEND)
        g_string_append_printf (s, " %s ", lent);
      else
        g_string_append (s, ", copied ");
      if (z->us[way] == 0)
        g_string_append (s, "not measured yet");
      else
        g_string_append_printf (s, "%u us", z->us[way]);
    }
    g_string_append_printf (s, " (over %u calls): %s, %u change%s", z->choice.calls,
                            z->choice.alt ? "copies"
                            : c->staged   ? "stages"
                                          : "lends",
                            z->choice.switches, z->choice.switches == 1 ? "" : "s");
  }
  g_mutex_unlock (&c->lock);
  if (s->len == 0)
  {
    g_string_free (s, TRUE);
    return NULL;
  }
  return g_string_free (s, FALSE);
}
