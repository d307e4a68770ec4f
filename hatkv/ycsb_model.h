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
 * ycsb_model.h: what the YCSB driver knows the store must hold, for a sample of the records
 * (one in N).  Calls that touch a sampled record hold its lock from before the request until
 * the reply is checked, so the model sees those records' calls one at a time and knows each
 * one's last acknowledged write exactly; a write that failed leaves its record unknown until
 * the next write is acknowledged.
 */
#ifndef _YCSB_MODEL_H
#define _YCSB_MODEL_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct _YcsbModel YcsbModel;

/* A model of every @sample-th record of @records (sample 0: none). */
YcsbModel *ycsb_model_new (guint64 records, guint sample);
void ycsb_model_free (YcsbModel *m);

/* Locks the sampled records among @ns (duplicates allowed), in order; unlock releases them. */
void ycsb_model_lock (YcsbModel *m, const guint64 *ns, guint count);
void ycsb_model_unlock (YcsbModel *m, const guint64 *ns, guint count);

/* A write of record @n with @version was acknowledged (@ok) or failed (its outcome unknown).
 * Records not sampled are ignored.  Call with @n locked. */
void ycsb_model_written (YcsbModel *m, guint64 n, guint64 version, gboolean ok);

/* A read of record @n found it (@present, the value of write @version) or not: TRUE if that is
 * what the model holds (always for records not sampled); FALSE with a message in @why.  Call
 * with @n locked. */
gboolean ycsb_model_check (YcsbModel *m, guint64 n, gboolean present, guint64 version, gchar **why);

/* Reads checked against the model so far, and how many of them disagreed. */
void ycsb_model_counts (YcsbModel *m, guint64 *checks, guint64 *mismatches);

G_END_DECLS

#endif
