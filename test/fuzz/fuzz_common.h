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
 * fuzz_common.h: what every harness of test/fuzz checks beyond the sanitizers.  A decoder
 * answers bad input with FALSE (or -1) and a GError, and good input with TRUE and none: a
 * failure without a GError, or a success that leaves one set, is a bug as much as a crash,
 * and so is a GLib warning or critical (a g_return_if_fail that fired, a GError set twice).
 */
#ifndef _FUZZ_COMMON_H
#define _FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <glib.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

/* libFuzzer reports an abort as a crash and keeps the input. */
#define FUZZ_FAIL(...)                      \
  do                                        \
  {                                         \
    fprintf (stderr, "fuzz: " __VA_ARGS__); \
    fputc ('\n', stderr);                   \
    abort ();                               \
  } while (0)

#define FUZZ_ASSERT(cond)                                               \
  do                                                                    \
  {                                                                     \
    if (!(cond))                                                        \
      FUZZ_FAIL ("%s:%d: %s does not hold", __FILE__, __LINE__, #cond); \
  } while (0)

/* Warnings and criticals abort: GLib's own fatal messages end in a breakpoint trap, which
 * libFuzzer does not catch (no input kept). */
static inline void
fuzz_log (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer unused)
{
  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
    FUZZ_FAIL ("%s%s%s", domain ? domain : "", domain ? ": " : "", message);
}

static inline GLogWriterOutput
fuzz_log_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer unused)
{
  const gchar *domain = NULL, *message = "";

  for (gsize i = 0; i < n_fields; i++)
  {
    if (g_strcmp0 (fields[i].key, "GLIB_DOMAIN") == 0)
      domain = fields[i].value;
    else if (g_strcmp0 (fields[i].key, "MESSAGE") == 0)
      message = fields[i].value;
  }
  fuzz_log (domain, level, message, NULL);
  return G_LOG_WRITER_HANDLED;
}

static inline void
fuzz_init (void)
{
  static gsize done;

  if (g_once_init_enter (&done))
  {
    g_log_set_default_handler (fuzz_log, NULL);
    g_log_set_writer_func (fuzz_log_writer, NULL, NULL);
    g_once_init_leave (&done, 1);
  }
}

/* For harnesses that make Thrift objects: stock classes' finalize chained up
 * (fuzz_thrift.h), then @input once, since GObject allocates for good the first time an
 * object of a type goes, before libFuzzer starts counting mallocs and frees. */
#define FUZZ_THRIFT_OBJECTS(input)                                          \
  int LLVMFuzzerInitialize (int *argc, char ***argv)                        \
  {                                                                         \
    fuzz_init ();                                                           \
    fuzz_thrift_init ();                                                    \
    LLVMFuzzerTestOneInput ((const uint8_t *) (input), sizeof (input) - 1); \
    return 0;                                                               \
  }

/* @ok: the call's own answer; @error: what it left.  Frees the error. */
static inline void
fuzz_check_outcome (const char *what, gboolean ok, GError **error)
{
  if (ok && *error != NULL)
    FUZZ_FAIL ("%s succeeded and left an error set: %s", what, (*error)->message);
  if (!ok && *error == NULL)
    FUZZ_FAIL ("%s failed without saying why (no GError)", what);
  if (!ok && ((*error)->message == NULL || (*error)->message[0] == '\0'))
    FUZZ_FAIL ("%s failed with an empty message", what);
  g_clear_error (error);
}

#endif /* _FUZZ_COMMON_H */
