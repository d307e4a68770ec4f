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

#include "rdma_domain.h"
#include "rdma_resources.h"
#include "rdma_verbs.h"

/* A device's shared domain, while a connection holds it. */
typedef struct
{
  struct ibv_context *verbs;
  struct ibv_pd *pd;         /* (owned) */
  guint users;
} Domain;

static GMutex lock;
static GSList *domains;      /* Domain * (owned) */

static Domain *
find (struct ibv_context *verbs, struct ibv_pd *pd)
{
  for (GSList *l = domains; l != NULL; l = l->next) {
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

struct ibv_pd *
rdma_domain_acquire (struct ibv_context *verbs, GError **error)
{
  struct ibv_pd *pd;
  Domain *d;

  g_mutex_lock (&lock);
  d = find (verbs, NULL);
  if (d != NULL) {
    d->users++;
    pd = d->pd;
  } else {
    pd = rdma_res_pd_alloc (verbs, error);
    if (pd != NULL && has_windows (pd)) {
      d = g_new (Domain, 1);
      *d = (Domain) { .verbs = verbs, .pd = pd, .users = 1 };
      domains = g_slist_prepend (domains, d);
    }
  }
  g_mutex_unlock (&lock);
  return pd;
}

void
rdma_domain_release (struct ibv_pd **pd)
{
  Domain *d;

  if (*pd == NULL)
    return;
  g_mutex_lock (&lock);
  d = find (NULL, *pd);
  if (d == NULL) {
    rdma_res_pd_destroy (pd);
  } else {
    *pd = NULL;
    if (--d->users == 0) {
      domains = g_slist_remove (domains, d);
      rdma_res_pd_destroy (&d->pd);
      g_free (d);
    }
  }
  g_mutex_unlock (&lock);
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
