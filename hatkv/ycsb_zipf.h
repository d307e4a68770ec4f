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
 * ycsb_zipf.h: YCSB's request distributions over records 0..n-1.  Zipfian is the generator
 * of Gray et al. ("Quickly generating billion-record synthetic databases", SIGMOD '94) that
 * YCSB's ZipfianGenerator uses, with YCSB's constant 0.99; scrambled, as YCSB's core
 * workload asks for requestdistribution=zipfian, the rank is hashed (FNV-1a) onto the
 * records so that the popular ones are spread over the key space.  YCSB scrambles over 10^10
 * items and reduces modulo the record count; this scrambles over the records themselves,
 * which keeps the same skew for the count in use.
 */
#ifndef _YCSB_ZIPF_H
#define _YCSB_ZIPF_H

#include <glib.h>

G_BEGIN_DECLS

#define YCSB_ZIPF_CONSTANT 0.99

typedef struct
{
  guint64 n;
  double theta, alpha, zetan, eta, half_pow_theta;
  gboolean scrambled;
} YcsbZipf;

/* Sets up @z over @n >= 1 records (computing zeta(n), O(n) once). */
void ycsb_zipf_init (YcsbZipf *z, guint64 n, double theta, gboolean scrambled);

/* The next record from @u, a uniform number in [0, 1); thread-safe (@z is read only). */
guint64 ycsb_zipf_next (const YcsbZipf *z, double u);

G_END_DECLS

#endif
