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

/* rdma_domain.c: protection domains per device (see rdma_domain.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "rdma_domain.h"
#include "rdma_resources.h"
#include "rdma_srq.h"
#include "rdma_verbs.h"

/* A device's shared domain, while a connection holds it. */
typedef struct
{
  struct ibv_context *verbs; /* (unowned): the device context of its connections' ids */
  struct ibv_pd *pd;         /* (owned) */
  guint users;
  RdmaSrq *srq; /* (owned) (nullable): made by the first connection that asks */
  guint32 srq_slot_size;
  gboolean srq_tried;
  GThread *events;       /* (owned) (nullable): reads the device's async events */
  int wake_fd;           /* tells it to stop */
  GHashTable *watched;   /* (owned): struct ibv_qp * -> Watch * (owned): QPs on the SRQ */
  RdmaRcache *rcache;    /* (owned) (nullable): made by the first connection that asks */
  RdmaLendCost *lend[2]; /* (owned) if @lend_owned (the device has no name), else
                              * (unowned): the process's books of the device, for lending and
                              * for staging (rdma_lend_cost_for_device); (nullable): made by
                              * the first connection that asks */
  gboolean lend_owned;
} Domain;

typedef struct
{
  RdmaDomainQpFailed failed;
  gpointer data; /* (unowned): the watcher's (its RdmaConn) */
} Watch;

static GMutex lock;
static GSList *domains; /* Domain * (owned) */

static Domain *
find (struct ibv_context *verbs, struct ibv_pd *pd)
{
  for (GSList *l = domains; l != NULL; l = l->next)
  {
    Domain *d = l->data;
    if ((verbs != NULL && d->verbs == verbs) || (pd != NULL && d->pd == pd))
      return d;
  }
  return NULL;
}

/* Whether the device of @pd can bind type-2 windows (a trial window, at once given back). */
static gboolean
has_windows (struct ibv_pd *pd)
{
  struct ibv_mw *mw = rdma_verbs->alloc_mw (pd, IBV_MW_TYPE_2);

  if (mw == NULL)
    return FALSE;
  if (rdma_verbs->dealloc_mw (mw) != 0)
    g_warning ("ibv_dealloc_mw: %s", g_strerror (errno));
  return TRUE;
}

/* Registered memory and fork (): since Linux 5.12 a pinned page is copied for the child at
 * fork, so the parent keeps the pages the NIC uses (rdma-core: IBV_FORK_UNNEEDED).  Before,
 * the parent's first write after a fork moves its page from under the NIC, unless rdma-core
 * marked registered memory MADV_DONTFORK (ibv_fork_init, which must come before any other
 * verbs call: RDMAV_FORK_SAFE=1 in the environment does it).  Said once, at the first
 * device. */
static void
check_fork (void)
{
  static gsize once;

  /* (a test's provider registers nothing) */
  if (rdma_verbs != &rdma_verbs_real)
    return;
  if (g_once_init_enter (&once))
  {
    if (ibv_is_fork_initialized () == IBV_FORK_DISABLED)
      g_warning ("ThriftRdma: this kernel shares registered memory with a child copy-on-write "
                 "(before Linux 5.12): a fork () while connections are open can move it from "
                 "under the NIC; if the program forks (system (), popen (), pre-forked workers), "
                 "start it with RDMAV_FORK_SAFE=1 in the environment");
    g_once_init_leave (&once, 1);
  }
}

struct ibv_pd *
rdma_domain_acquire (struct ibv_context *verbs, GError **error)
{
  struct ibv_pd *pd;
  Domain *d;

  check_fork ();
  g_mutex_lock (&lock);
  d = find (verbs, NULL);
  if (d != NULL)
  {
    d->users++;
    pd = d->pd;
  }
  else
  {
    pd = rdma_res_pd_alloc (verbs, error);
    if (pd != NULL && has_windows (pd))
    {
      d = g_new (Domain, 1);
      *d = (Domain){ .verbs = verbs,
                     .pd = pd,
                     .users = 1,
                     .wake_fd = -1,
                     .watched = g_hash_table_new_full (NULL, NULL, NULL, g_free) };
      domains = g_slist_prepend (domains, d);
    }
  }
  g_mutex_unlock (&lock);
  return pd;
}

/* The device's async events: an SRQ running low grows (rdma_srq.h); the others say nothing
 * a connection does not hear of from its own completions and CM events. */
static gpointer
events_main (gpointer data)
{
  Domain *d = data;
  struct pollfd pfd[2] = {
    { .fd = d->verbs->async_fd, .events = POLLIN },
    { .fd = d->wake_fd, .events = POLLIN },
  };

  for (;;)
  {
    struct ibv_async_event ev;

    if (poll (pfd, 2, -1) < 0 && errno != EINTR)
    {
      g_warning ("ThriftRdma: polling the device's async events: %s", g_strerror (errno));
      return NULL;
    }
    if (pfd[1].revents != 0)
      return NULL;
    while (rdma_verbs->get_async_event (d->verbs, &ev) == 0)
    {
      if (ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && d->srq != NULL
          && ev.element.srq == rdma_srq_verbs (d->srq))
      {
        GError *e = NULL;
        if (!rdma_srq_limit_reached (d->srq, &e))
        {
          g_warning ("ThriftRdma: the shared receive queue cannot grow (%s); senders wait "
                     "for the slots readers give back",
                     e->message);
          g_error_free (e);
        }
      }
      else if (ev.event_type == IBV_EVENT_QP_FATAL || ev.event_type == IBV_EVENT_QP_REQ_ERR
               || ev.event_type == IBV_EVENT_QP_ACCESS_ERR
               || ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED)
      {
        Watch *w;

        g_mutex_lock (&lock);
        w = g_hash_table_lookup (d->watched, ev.element.qp);
        if (w != NULL)
          w->failed (w->data, ev.event_type);
        g_mutex_unlock (&lock);
      }
      rdma_verbs->ack_async_event (&ev);
    }
  }
}

void
rdma_domain_watch (struct ibv_pd *pd, struct ibv_qp *qp, RdmaDomainQpFailed failed, gpointer data)
{
  Domain *d;

  g_mutex_lock (&lock);
  d = find (NULL, pd);
  if (d != NULL)
  {
    Watch *w = g_new (Watch, 1);
    *w = (Watch){ failed, data };
    g_hash_table_replace (d->watched, qp, w);
  }
  g_mutex_unlock (&lock);
}

void
rdma_domain_unwatch (struct ibv_pd *pd, struct ibv_qp *qp)
{
  Domain *d;

  g_mutex_lock (&lock);
  d = find (NULL, pd);
  if (d != NULL)
    g_hash_table_remove (d->watched, qp);
  g_mutex_unlock (&lock);
}

static void
domain_free (Domain *d)
{
  if (d->events != NULL)
  {
    guint64 one = 1;
    if (write (d->wake_fd, &one, sizeof one) != sizeof one)
      g_warning ("ThriftRdma: eventfd write: %s", g_strerror (errno));
    g_thread_join (d->events);
    /* what the last connections' QPs raised on their way out (their last WQE) */
    {
      struct ibv_async_event ev;
      while (rdma_verbs->get_async_event (d->verbs, &ev) == 0)
        rdma_verbs->ack_async_event (&ev);
    }
  }
  if (d->wake_fd >= 0)
    close (d->wake_fd);
  rdma_srq_free (d->srq);
  if (d->rcache != NULL)
    rdma_rcache_free (d->rcache); /* (its users released what they held) */
  for (guint i = 0; d->lend_owned && i < G_N_ELEMENTS (d->lend); i++)
    rdma_lend_cost_free (d->lend[i]);
  rdma_res_pd_destroy (&d->pd);
  g_hash_table_unref (d->watched);
  g_free (d);
}

RdmaSrq *
rdma_domain_srq (struct ibv_pd *pd, guint32 slot_size, gint numa_node)
{
  RdmaSrq *srq = NULL;
  GError *e = NULL;
  Domain *d;

  g_mutex_lock (&lock);
  d = find (NULL, pd);
  if (d != NULL && !d->srq_tried)
  {
    int flags = fcntl (d->verbs->async_fd, F_GETFL);

    d->srq_tried = TRUE;
    d->srq_slot_size = slot_size;
    d->wake_fd = eventfd (0, EFD_CLOEXEC);
    if (d->wake_fd < 0 || flags < 0 || fcntl (d->verbs->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
    {
      g_warning ("ThriftRdma: cannot watch the device's async events (%s): connections keep "
                 "receive slots of their own",
                 g_strerror (errno));
    }
    else
    {
      d->srq = rdma_srq_new (pd, slot_size, RDMA_DOMAIN_SRQ_MAX, numa_node, &e);
      if (d->srq == NULL)
      {
        g_warning ("ThriftRdma: no shared receive queue on the device (%s): connections keep "
                   "receive slots of their own",
                   e->message);
        g_error_free (e);
      }
      else
      {
        d->events = g_thread_new ("rdma-events", events_main, d);
      }
    }
  }
  if (d != NULL && d->srq_slot_size == slot_size)
    srq = d->srq;
  g_mutex_unlock (&lock);
  return srq;
}

RdmaRcache *
rdma_domain_rcache (struct ibv_pd *pd, guint max_entries, guint64 max_bytes)
{
  RdmaRcache *cache = NULL;
  Domain *d;

  g_mutex_lock (&lock);
  d = find (NULL, pd);
  if (d != NULL)
  {
    if (d->rcache == NULL)
      d->rcache = rdma_rcache_new (pd, max_entries, (gsize) max_bytes);
    else
      rdma_rcache_raise_bounds (d->rcache, max_entries, (gsize) max_bytes);
    cache = d->rcache;
  }
  g_mutex_unlock (&lock);
  return cache;
}

RdmaLendCost *
rdma_domain_lend_cost (struct ibv_pd *pd, gboolean staged)
{
  RdmaLendCost *cost = NULL;
  Domain *d;

  g_mutex_lock (&lock);
  d = find (NULL, pd);
  if (d != NULL)
  {
    if (d->lend[staged] == NULL)
    {
      /* a test's in-memory provider has no device: a book of the domain's life */
      d->lend_owned = d->verbs->device == NULL;
      d->lend[staged] = d->lend_owned ? rdma_lend_cost_new ()
                                      : rdma_lend_cost_for_device (d->verbs->device->name, staged);
      if (staged)
        rdma_lend_cost_set_staged (d->lend[staged]);
    }
    cost = d->lend[staged];
  }
  g_mutex_unlock (&lock);
  return cost;
}

void
rdma_domain_release (struct ibv_pd **pd)
{
  Domain *d, *last = NULL;

  if (*pd == NULL)
    return;
  g_mutex_lock (&lock);
  d = find (NULL, *pd);
  if (d == NULL)
  {
    rdma_res_pd_destroy (pd);
  }
  else
  {
    *pd = NULL;
    if (--d->users == 0)
    {
      domains = g_slist_remove (domains, d);
      last = d;
    }
  }
  g_mutex_unlock (&lock);
  /* outside the lock: its event thread may be waiting for it to route an event */
  if (last != NULL)
    domain_free (last);
}

guint
rdma_domain_threads (void)
{
  guint n = 0;

  g_mutex_lock (&lock);
  for (GSList *l = domains; l != NULL; l = l->next)
    n += ((Domain *) l->data)->events != NULL;
  g_mutex_unlock (&lock);
  return n;
}

gboolean
rdma_domain_shared (struct ibv_pd *pd)
{
  gboolean shared;

  g_mutex_lock (&lock);
  shared = find (NULL, pd) != NULL;
  g_mutex_unlock (&lock);
  return shared;
}

guint
rdma_domain_users (struct ibv_pd *pd)
{
  Domain *d;
  guint n;

  g_mutex_lock (&lock);
  d = find (NULL, pd);
  n = d != NULL ? d->users : 0;
  g_mutex_unlock (&lock);
  return n;
}
