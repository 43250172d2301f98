/* Shards made by child processes: up to -j trace files parsed at once,
 * each by a process of its own into its own database (one SQLite writer
 * per file: a single one is what limits ingestion into one database).
 * What a child says on stderr is replayed in file order, its error comes
 * back through shared memory, and the first failing file's error is the
 * caller's (with quiet_on_failure, what they said goes unsaid then: the
 * caller reads the files another way, which says it; with said_out it is
 * handed over instead, for the caller to say once it knows). */
#include "ta_cleanup.h"
#include "ta_ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int ta_shards_build(char *const *files, char *const *outs, size_t n,
		    const struct ta_ingest_opts *o, int quiet_on_failure,
		    struct ta_buf *said_out, struct ta_error *err)
{
	int jobs = ta_jobs(o);
	struct ta_ingest_opts child = *o;
	struct ta_error *errs;
	FILE **said;
	struct ta_buf *heard;
	pid_t *pid;
	void **doomed;           /* stopped on a signal until waited for */
	size_t i, next = 0, running = 0;
	int rc = 0;

	if (n == 0)
		return 0;
	if ((jobs < 2 || n < 2) && !quiet_on_failure && !said_out) {   /* here, in turn */
		for (i = 0; i < n; i++)
			if (ta_ingest(&files[i], 1, outs[i], o, err) < 0)
				return -1;
		return 0;
	}
	errs = mmap(NULL, n * sizeof(*errs), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (errs == MAP_FAILED) {
		ta_error_set(err, TA_EXIT_SYSTEM, "cannot map memory for %zu workers", n);
		return -1;
	}
	memset(errs, 0, n * sizeof(*errs));
	said = ta_xcalloc(n, sizeof(*said));
	heard = ta_xcalloc(n, sizeof(*heard));
	pid = ta_xcalloc(n, sizeof(*pid));
	doomed = ta_xcalloc(n, sizeof(*doomed));
	/* cores left over when files are fewer: each child's own threads
	 * (decompression, a second parser for a large file) */
	child.jobs = n < (size_t)jobs ? jobs / (int)n : 1;
	child.progress = NULL;         /* one terminal, many writers */
	fflush(NULL);
	while (next < n || running) {
		pid_t p;

		while (rc == 0 && next < n && running < (size_t)jobs) {
			i = next++;
			errs[i].code = -1;     /* not finished */
			if (!(said[i] = tmpfile()) ||
			    (pid[i] = ta_cleanup_fork(&doomed[i])) < 0) {
				ta_error_set(err, TA_EXIT_SYSTEM, "cannot start a process");
				rc = -1;
				break;
			}
			if (pid[i] == 0) {
				dup2(fileno(said[i]), 2);
				if (ta_ingest(&files[i], 1, outs[i], &child, &errs[i]) == 0)
					errs[i].code = 0;
				fflush(NULL);
				_exit(0);
			}
			running++;
		}
		if (!running || (p = wait(NULL)) < 0)
			break;
		running--;
		/* what it said, kept in memory: a file each for a thousand
		 * ranks would run out of descriptors */
		for (i = 0; i < next; i++)
			if (pid[i] == p) {
				ta_cleanup_drop(doomed[i]);
				if (said[i]) {
					ta_buf_read_file(&heard[i], said[i]);
					fclose(said[i]);
					said[i] = NULL;
				}
			}
	}
	for (i = 0; i < next; i++) {
		if (rc == 0 && errs[i].code != 0) {
			*err = errs[i];
			if (err->code < 0)
				ta_error_set(err, TA_EXIT_SYSTEM, "'%s': its parser died", files[i]);
			rc = -1;
		}
	}
	for (i = 0; i < next; i++) {
		if (said[i])
			fclose(said[i]);
		if (said_out && rc == 0)
			ta_buf_add(said_out, heard[i].s ? heard[i].s : "", heard[i].len);
		else if (!said_out && (rc == 0 || !quiet_on_failure))
			ta_stderr_bytes(heard[i].s, heard[i].len);
		ta_buf_free(&heard[i]);
	}
	munmap(errs, n * sizeof(*errs));
	free(said);
	free(heard);
	for (i = 0; i < next; i++)  /* any left on an error */
		ta_cleanup_drop(doomed[i]);
	free(pid);
	free(doomed);
	return rc;
}
