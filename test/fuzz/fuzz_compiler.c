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
 * fuzz_compiler.c: thrift-hatrpc (thrift-compiler-patch) on an IDL text, as a user runs it:
 * `THRIFT_HATRPC_DUMP_HINTS=1 thrift-hatrpc --gen c_glib -out OUT fuzz.thrift`, which lexes,
 * parses, validates and resolves the hint groups and hatrpc.* annotations, then generates.
 * The IDL may include "inc_base.thrift", a service with hints written beside it.  The
 * compiler must either succeed (exit 0, no error printed) or report an error with the file
 * and a line of it ([ERROR:file:N] or [FAILURE:file:N], N a line of the file; a generator's
 * own failure is [FAILURE:generation:1]) and exit with a status other than 0, having
 * written nothing.  A sanitizer's report, a signal, a hang (still running after 9 s) or an
 * error without its place is a finding.
 *
 * Why a child per input: the compiler (built from the patched tree that make extracted, bison's
 * and flex's output included, with coverage and ASan/UBSan, its main renamed) ends every error
 * in exit() and keeps its state in globals and statics (flex's buffers and start condition,
 * the grammar's pending hint annotations, the parse tree it never frees), so running it in
 * this process would need exit() turned into a longjmp, every one of those reset and its
 * leaks swept after each input, and would still not be the command a user runs.  Instead a
 * fork server, forked once before libFuzzer starts, forks a child per input that runs the
 * real main and exits as the command does (about 4-5 ms of CPU an input on this 2-core
 * machine, most of it the compile under the sanitizers).  The child's coverage counters are
 * copied back into this process before libFuzzer reads them, so the search is coverage-guided
 * as in the other harnesses; the comparisons the child makes are lost to libFuzzer's table of
 * compared values, so test/fuzz/compiler.dict gives it the grammar's words.  (AFL++, Debian's
 * afl++, forks the same way but would be a second framework beside scripts/fuzz.)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create, nftw's FTW_PHYS, strsignal */
#endif
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

/* The compiler's main (main.cc, its symbol renamed by scripts/fuzz). */
int hatrpc_compiler_main (int argc, char **argv);

/* libFuzzer's coverage counters: one section for the whole program, within the linker's
 * bounds of it.  (The coverage pass declares these names for its constructor and would rename
 * its own if this file were instrumented, which leaves the constructor without counters: this
 * file is compiled without coverage, scripts/fuzz.) */
extern uint8_t __start___sancov_cntrs[], __stop___sancov_cntrs[];

/* exit() is linked to __wrap_exit (-Wl,--wrap=exit): in the child it ends the child at once,
 * without atexit handlers (libFuzzer's would take the child's exit for a crash of this
 * process) nor LeakSanitizer (the compiler frees nothing before it exits, as stock). */
void __real_exit (int status) __attribute__ ((noreturn));
void __wrap_exit (int status) __attribute__ ((noreturn));

/* A child's status for a sanitizer's report (the report is in its output). */
#define CHILD_SANITIZER 99
/* A child still running after this many seconds is a hang (SIGALRM ends it, before
 * libFuzzer's -timeout=10 of scripts/fuzz would end this process without its output). */
#define CHILD_SECONDS 9

static char work[4096];
static char input[sizeof work + 32], base[sizeof work + 32], out[sizeof work + 32];
static int output = -1;         /* the child's stdout and stderr (a memfd) */
static uint8_t *child_counters; /* shared with the child */
static size_t n_counters;
static int in_child;

/* Written beside the input, for `include "inc_base.thrift"` (as test/compiler/cases). */
static const char inc_base[] = "service IncBase {\n"
                               "  hint: perf_goal = latency;\n"
                               "  c_hint: payload_size = 4K;\n"
                               "  void x() [ s_hint: polling = event; ]\n"
                               "} (hatrpc.concurrency = \"8\")\n";

static void fail (const char *fmt, ...) __attribute__ ((format (printf, 1, 2), noreturn));
static void remove_work (void);

/* The child's output, then why it is a finding: libFuzzer keeps the input (abort). */
static void
fail (const char *fmt, ...)
{
  char buf[8192];
  ssize_t n;
  off_t at = 0;
  va_list args;

  fputs ("fuzz: thrift-hatrpc said:\n", stderr);
  while (at < 65536 && (n = pread (output, buf, sizeof buf, at)) > 0)
  {
    fwrite (buf, 1, (size_t) n, stderr);
    at += n;
  }
  if (at >= 65536)
    fputs ("\n[...]\n", stderr);
  fputs ("fuzz: ", stderr);
  va_start (args, fmt);
  vfprintf (stderr, fmt, args);
  va_end (args);
  fputc ('\n', stderr);
  remove_work ();
  abort ();
}

static void
child_end (int status)
{
  fflush (stdout);
  fflush (stderr);
  memcpy (child_counters, __start___sancov_cntrs, n_counters);
  _exit (status & 0xff);
}

void
__wrap_exit (int status)
{
  if (in_child)
    child_end (status);
  __real_exit (status);
}

static void
child_sanitizer_died (void)
{
  fflush (stdout);
  _exit (CHILD_SANITIZER);
}

static int
remove_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void) st;
  (void) flag;
  if (ftw->level > 0)
    remove (path);
  return 0;
}

static int server_go = -1, server_done = -1;
static pid_t server;

/* At exit or a finding: the fork server ends when its pipe closes, the work directory goes. */
static void
remove_work (void)
{
  if (server > 0)
  {
    close (server_go);
    waitpid (server, NULL, 0);
    server = 0;
  }
  if (work[0] != '\0')
  {
    nftw (work, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    rmdir (work);
    work[0] = '\0';
  }
}

static void
write_file (const char *path, const void *data, size_t size)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

  if (fd < 0 || (size > 0 && write (fd, data, size) != (ssize_t) size) || close (fd) != 0)
    fail ("cannot write %s: %s", path, strerror (errno));
}

static size_t
entries (const char *dir)
{
  size_t n = 0;
  DIR *d = opendir (dir);
  struct dirent *e;

  if (d == NULL)
    fail ("cannot read %s: %s", dir, strerror (errno));
  while ((e = readdir (d)) != NULL)
    n += strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0;
  closedir (d);
  return n;
}

/* The line of a "[KIND:PATH:LINE]" at the start of @line, and its path, or 0. */
static long
place (const char *line, const char *kind, char *path, size_t path_size)
{
  size_t k = strlen (kind);
  const char *end, *colon;
  char *rest;
  long n;

  if (line[0] != '[' || strncmp (line + 1, kind, k) != 0 || line[1 + k] != ':')
    return 0;
  end = strchr (line, ']');
  if (end == NULL)
    return 0;
  for (colon = end; colon > line + 1 + k && *colon != ':'; colon--)
    ;
  if (colon <= line + 1 + k || (size_t) (colon - (line + 2 + k)) >= path_size)
    return 0;
  memcpy (path, line + 2 + k, (size_t) (colon - (line + 2 + k)));
  path[colon - (line + 2 + k)] = '\0';
  n = strtol (colon + 1, &rest, 10);
  return rest == end ? n : 0;
}

/* Checks the output of a run that exited with @status on @data. */
static void
check_output (int status, const uint8_t *data, size_t size)
{
  static char *text;
  static size_t text_size;
  off_t length = lseek (output, 0, SEEK_END);
  long lines = 1, n;
  /* where the errors said they were: the IDL, or generation (which may have written files) */
  enum
  {
    UNSAID,
    IN_IDL,
    IN_GENERATION
  } said = UNSAID;
  char path[sizeof work + 64];
  char *line, *next;

  for (size_t i = 0; i < size; i++)
    lines += data[i] == '\n';
  if (length < 0)
    fail ("cannot read the compiler's output: %s", strerror (errno));
  if ((size_t) length + 1 > text_size)
  {
    text_size = (size_t) length + 1;
    text = realloc (text, text_size);
    if (text == NULL)
      abort ();
  }
  if (pread (output, text, (size_t) length, 0) != length)
    fail ("cannot read the compiler's output: %s", strerror (errno));
  text[length] = '\0';

  for (line = text; line != NULL && *line != '\0'; line = next)
  {
    next = strchr (line, '\n');
    if (next != NULL)
      *next++ = '\0';
    if ((n = place (line, "ERROR", path, sizeof path)) == 0)
      n = place (line, "FAILURE", path, sizeof path);
    if (n == 0)
    {
      if (strncmp (line, "[ERROR", 6) == 0 || strncmp (line, "[FAILURE", 8) == 0)
        fail ("an error without its file and line: %s", line);
      /* stock Thrift's one error without a place: a type named (a return type, a field's,
       * a throws clause's) but never defined, found when the name is resolved after the
       * parse, possibly while generating (files written before it stay); nothing of the
       * hints */
      if (status != 0 && strncmp (line, "Type \"", 6) == 0 && strlen (line) > 19
          && strcmp (line + strlen (line) - 13, "\" not defined") == 0)
        said = IN_GENERATION;
      continue;
    }
    if (status == 0)
      fail ("exit status 0 after an error: %s", line);
    if (strcmp (path, "generation") == 0)
    {
      said = n == 1 ? IN_GENERATION : said;
      continue;
    }
    if (strcmp (path, input) == 0)
    {
      if (n < 1 || n > lines)
        fail ("an error at line %ld of an input of %ld lines: %s", n, lines, line);
    }
    else if (strcmp (path, base) != 0)
    {
      fail ("an error in '%s', neither the input nor the file it includes: %s", path, line);
    }
    said = said == UNSAID ? IN_IDL : said;
  }
  if (status != 0 && said == UNSAID)
    fail ("exit status %d without an error that says its file and line", status);
  /* nothing written, unless the generator itself failed part way */
  if (status != 0 && said != IN_GENERATION && entries (out) != 0)
    fail ("exit status %d, yet %zu files written", status, entries (out));
}

/* The compiler's run of one input, in a child of the fork server: its output to the memfd,
 * its coverage from zero, its end through child_end (). */
static void
run_compiler (void)
{
  static const int reset[] = { SIGALRM, SIGINT,  SIGTERM, SIGABRT, SIGILL, SIGFPE,
                               SIGBUS,  SIGUSR1, SIGUSR2, SIGXFSZ, SIGPIPE };
  char *args[] = { "thrift-hatrpc", "--gen", "c_glib", "-out", out, input, NULL };
  int null = open ("/dev/null", O_RDONLY);

  in_child = 1;
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++)
    signal (reset[i], SIG_DFL);
  if (null < 0 || dup2 (null, 0) < 0 || dup2 (output, 1) < 0 || dup2 (output, 2) < 0)
    _exit (CHILD_SANITIZER);
  close (null);
  alarm (CHILD_SECONDS);
  __lsan_disable ();
  __sanitizer_set_death_callback (child_sanitizer_died);
  memset (__start___sancov_cntrs, 0, n_counters);
  child_end (hatrpc_compiler_main (6, args));
}

/* The fork server: forked once, before libFuzzer starts (so small, and never written to by
 * libFuzzer, which makes each fork of it cheaper than one of libFuzzer's process); for each
 * byte on @go it runs the compiler in a child and answers with the child's wait status. */
static void
fork_server (int go, int done)
{
  char c;
  int status;
  pid_t pid;

  prctl (PR_SET_PDEATHSIG, SIGKILL);
  while (read (go, &c, 1) == 1)
  {
    pid = fork ();
    if (pid == 0)
      run_compiler ();
    if (pid < 0)
      status = -1;
    else
      while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (write (done, &status, sizeof status) != sizeof status)
      break;
  }
  _exit (0);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  int go[2], done[2];
  const char *tmp;
  pid_t pid;

  (void) argc;
  (void) argv;
  n_counters = (size_t) (__stop___sancov_cntrs - __start___sancov_cntrs);
  child_counters = mmap (NULL, n_counters ? n_counters : 1, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (child_counters == MAP_FAILED)
    abort ();
  tmp = getenv ("TMPDIR");
  snprintf (work, sizeof work - 64, "%s/fuzz-compiler.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  output = memfd_create ("thrift-hatrpc-output", 0);
  if (output < 0 || mkdtemp (work) == NULL)
    abort ();
  atexit (remove_work);
  snprintf (input, sizeof input, "%s/fuzz.thrift", work);
  snprintf (base, sizeof base, "%s/inc_base.thrift", work);
  snprintf (out, sizeof out, "%s/out", work);
  if (mkdir (out, 0755) != 0)
    abort ();
  write_file (base, inc_base, sizeof inc_base - 1);
  setenv ("THRIFT_HATRPC_DUMP_HINTS", "1", 1);

  if (pipe2 (go, O_CLOEXEC) != 0 || pipe2 (done, O_CLOEXEC) != 0)
    abort ();
  fflush (stdout);
  fflush (stderr);
  pid = fork ();
  if (pid < 0)
    abort ();
  if (pid == 0)
  {
    close (go[1]);
    close (done[0]);
    fork_server (go[0], done[1]);
  }
  close (go[0]);
  close (done[1]);
  server = pid;
  server_go = go[1];
  server_done = done[0];
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  int status;
  ssize_t n;

  write_file (input, data, size);
  if (entries (out) != 0)
  {
    nftw (out, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    if (entries (out) != 0)
      fail ("cannot empty %s", out);
  }
  if (ftruncate (output, 0) != 0 || lseek (output, 0, SEEK_SET) != 0)
    abort ();
  memset (child_counters, 0, n_counters);

  if (write (server_go, "", 1) != 1)
    fail ("the fork server is gone: %s", strerror (errno));
  while ((n = read (server_done, &status, sizeof status)) < 0 && errno == EINTR)
    ;
  if (n != sizeof status)
    fail ("the fork server is gone");
  if (status == -1)
    fail ("the fork server could not fork");
  memcpy (__start___sancov_cntrs, child_counters, n_counters);

  if (WIFSIGNALED (status) && WTERMSIG (status) == SIGALRM)
    fail ("thrift-hatrpc still ran after %d s: a hang", CHILD_SECONDS);
  if (WIFSIGNALED (status))
    fail ("thrift-hatrpc was killed by signal %d (%s)", WTERMSIG (status),
          strsignal (WTERMSIG (status)));
  if (WEXITSTATUS (status) == CHILD_SANITIZER)
    fail ("a sanitizer's report in thrift-hatrpc (above)");
  check_output (WEXITSTATUS (status), data, size);
  return 0;
}
