# traceanalyze — GNU make.
#   make                 build ./traceanalyze
#   make demo            install missing packages, build, analyse testdata/
#   make check           build and run every test
#   make DEVELOPER=1     strict warnings (-Werror); SANITIZE=address,undefined
#   make NO_ISAL=1       inflate with zlib even where ISA-L is installed
#   make SANITIZE=thread tsan   parallel ingestion under ThreadSanitizer
#   make bench | lint | install | uninstall | clean

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
COMPDIR ?= $(PREFIX)/share/bash-completion/completions
DESTDIR ?=

CC ?= cc
PKGS = yajl sqlite3 zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lyajl -lsqlite3 -lz)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)
# ISA-L's inflate when installed (libisal-dev): zlib's stays the fallback
ifndef NO_ISAL
ISAL_LIBS := $(shell pkg-config --libs libisal 2>/dev/null || \
	(test -f /usr/include/isa-l/igzip_lib.h && echo -lisal))
endif
ifneq ($(ISAL_LIBS),)
PKG_CFLAGS += -DTA_HAVE_ISAL
PKG_LIBS += $(ISAL_LIBS)
endif
# gzread.o is built again when the inflater changes (make NO_ISAL=1 after make)
INFLATER := $(if $(ISAL_LIBS),isa-l,zlib)
$(shell test "$$(cat src/parse/.inflater 2>/dev/null)" = $(INFLATER) || echo $(INFLATER) > src/parse/.inflater)

CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Iinclude -Isrc $(PKG_CFLAGS)
LDLIBS += $(PKG_LIBS) -lcsv -lm -lpthread

ifdef DEVELOPER
CFLAGS += -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
endif
ifdef SANITIZE
CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif

# everything but main.c goes into a library the tests link against
# (src/ reads as the pipeline: parse, model, analyses/<what they study>,
# report; commands/ declares them, exec/ runs them; compat/hta/ is HTA's
# own algorithms; util/ what every layer uses)
LIB_SRC := $(wildcard src/*/*.c src/*/*/*.c)
LIB_OBJ := $(LIB_SRC:.c=.o)
TEST_SRC := $(wildcard tests/check_*.c)
TEST_BIN := tests/run_checks

HEADERS := $(wildcard include/*.h src/*/*.h src/*/*/*.h)

all: traceanalyze

traceanalyze: src/main.o libtraceanalyze.a
	$(CC) $(LDFLAGS) -o $@ src/main.o libtraceanalyze.a $(LDLIBS)

# made anew: ar keeps members whose source is gone (a moved declaration
# could link from the stale copy)
libtraceanalyze.a: $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

%.o: %.c $(HEADERS)
	$(CC) $(CFLAGS) -c -o $@ $<

src/parse/gzread.o: src/parse/.inflater

# TA_MODEL_ID: a checksum of what chooses the model's rows (its source and
# the headers), so that rows a database keeps (main.dev_rows) from another
# build are made again, not trusted
MODEL_ID_SRC := $(wildcard src/model/*.c src/model/*.h include/*.h)
src/model/model_id.inc: $(MODEL_ID_SRC)
	printf '#define TA_MODEL_ID "%s"\n' "$$(cat $(MODEL_ID_SRC) | cksum | cut -d' ' -f1)" > $@
src/model/dev.o src/model/keep.o: src/model/model_id.inc

# TA_ROOF_ID: the same for the roofline's walk a cache entry keeps
# (main.roof_calls): the model's, and what chooses and walks the calls
ROOF_ID_SRC := $(MODEL_ID_SRC) src/analyses/gpu/roofline_walk.c \
	src/analyses/gpu/roofline_keep.c src/analyses/gpu/roofline_int.h \
	src/analyses/gpu/flops.c src/analyses/gpu/flops.h
src/analyses/gpu/roof_id.inc: $(ROOF_ID_SRC)
	printf '#define TA_ROOF_ID "%s"\n' "$$(cat $(ROOF_ID_SRC) | cksum | cut -d' ' -f1)" > $@
src/analyses/gpu/roofline_keep.o: src/analyses/gpu/roof_id.inc

# TA_CRIT_ID: the same for the critical path a cache entry keeps
# (main.path_kept): it rests on the model, the analyses' loads and the
# walk, so every source of theirs (a change anywhere walks again)
CRIT_ID_SRC := $(MODEL_ID_SRC) $(wildcard src/analyses/*/*.c src/analyses/*/*.h \
	src/util/*.c src/util/*.h) src/report/table_wire.c
src/analyses/critical/crit_id.inc: $(CRIT_ID_SRC)
	printf '#define TA_CRIT_ID "%s"\n' "$$(cat $(CRIT_ID_SRC) | cksum | cut -d' ' -f1)" > $@
src/analyses/critical/critical_keep.o: src/analyses/critical/crit_id.inc

$(TEST_BIN): $(TEST_SRC) tests/check_main.h libtraceanalyze.a
	$(CC) $(CFLAGS) $(LDFLAGS) -Itests -o $@ $(TEST_SRC) libtraceanalyze.a \
		$(CHECK_LIBS) $(LDLIBS)

# The test suite: unit tests, golden CLI tests, HTA conformance, man lint.
check: deps
	$(MAKE) test

test: traceanalyze $(TEST_BIN)
	CK_DEFAULT_TIMEOUT=60 ./$(TEST_BIN)
	sh tests/jobs.sh
	sh tests/compat_cache.sh
	sh tests/dev_cache.sh
	python3 tests/ops_oracle.py
	python3 tests/ops_stack.py
	$(MAKE) suites
	sh tests/html.sh
	sh tests/shards.sh
	sh tests/linear.sh
	sh tests/slurm.sh
	sh tests/manlint.sh
	sh tests/layers.sh
	sh tests/tty.sh
	sh tests/install.sh
	sh tests/demo.sh

# the suites that run the analyses on real and hostile input: make check
# runs them, and CI's sanitizer pass (make sanitize) runs them alone
suites: traceanalyze $(TEST_BIN)
	sh tests/golden.sh
	sh tests/stream.sh
	python3 tests/bad/corpus.py
	sh tests/hostile.sh
	@# every expectation against a real capture (a new one runs unlisted)
	@for t in tests/*_expect.py; do echo "python3 $$t"; python3 $$t || exit 1; done
	sh tests/cache.sh
	sh tests/roof_cache.sh
	sh tests/path_cache.sh
	sh tests/beside.sh
	sh tests/tblog.sh
	@# under the sanitizers (NO_CONFORM), the captures that stand for the rest
	@if [ -z "$(NO_CONFORM)" ]; then echo "python3 tests/invariants.py"; python3 tests/invariants.py; \
	else echo "INVARIANTS_LIGHT=1 python3 tests/invariants.py"; INVARIANTS_LIGHT=1 python3 tests/invariants.py; fi
	python3 tests/hostile_walk.py
	python3 tests/hostile_output.py
	python3 tests/hostile_snapshot.py
	python3 tests/hostile_db.py
	python3 tests/hostile_tb.py
	@# HTA's numbers: compared in make check; the sanitizer pass leaves them
	@# out (the golden --hta-compat cases run the same code under it) to
	@# keep CI under 30 minutes on 2 cores
	@if [ -z "$(NO_CONFORM)" ]; then echo "sh tests/conform.sh"; sh tests/conform.sh; fi
	@# the plugin's numbers: under the sanitizers on its 27 test traces
	@# only (our captures' views run the same code, in make check)
	@if [ -z "$(NO_CONFORM)" ]; then echo "sh tests/tb.sh"; sh tests/tb.sh; \
	else echo "TB_PLUGIN_ONLY=1 sh tests/tb.sh"; TB_PLUGIN_ONLY=1 sh tests/tb.sh; fi
	python3 tests/docs_examples.py

# the sanitizer pass of CI (make DEVELOPER=1 SANITIZE=address,undefined
# sanitize): the unit tests and the analyses' suites (HTA's conformance
# aside); not those that check
# output across processes, machines and installs (make check runs them)
sanitize: traceanalyze $(TEST_BIN)
	CK_DEFAULT_TIMEOUT=120 ./$(TEST_BIN)
	$(MAKE) NO_CONFORM=1 suites

# the unit tests and a few CLI runs under valgrind: no error, no leak
valgrind: traceanalyze $(TEST_BIN)
	CK_FORK=no CK_DEFAULT_TIMEOUT=600 TA_CHECK_LIGHT=1 valgrind -q --error-exitcode=1 \
		--leak-check=full --errors-for-leak-kinds=definite,indirect ./$(TEST_BIN)
	sh tests/valgrind.sh

# parallel ingestion under ThreadSanitizer: make DEVELOPER=1 SANITIZE=thread tsan
tsan: traceanalyze $(TEST_BIN)
	TSAN_OPTIONS="halt_on_error=1" TA_CHECK_LIGHT=1 CK_RUN_SUITE=split ./$(TEST_BIN)
	TSAN_OPTIONS="halt_on_error=1" JOBS_LIGHT=1 sh tests/jobs.sh
	TSAN_OPTIONS="halt_on_error=1" python3 tests/bad/corpus.py
	@# report --html: diagnose and the rooflines in a thread beside the rest
	TSAN_OPTIONS="halt_on_error=1" BESIDE_LIGHT=1 sh tests/beside.sh
	@# the golden cases that read several files (threads at work)
	TSAN_OPTIONS="halt_on_error=1" GOLDEN_ONLY='ddp_|fsdp2|two_ranks|copies|tb_gloo|-j|--jobs|shards|TMP' sh tests/golden.sh

demo: deps
	$(MAKE) traceanalyze
	sh tools/demo.sh

deps:
	sh tools/setup.sh

bench: traceanalyze
	sh tools/bench.sh

lint:
	mandoc -Tlint -Wwarning man/traceanalyze.1

install: traceanalyze
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 traceanalyze $(DESTDIR)$(BINDIR)/traceanalyze
	install -m 644 man/traceanalyze.1 $(DESTDIR)$(MANDIR)/man1/traceanalyze.1
	install -d $(DESTDIR)$(COMPDIR)
	install -m 644 completions/traceanalyze.bash $(DESTDIR)$(COMPDIR)/traceanalyze

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/traceanalyze $(DESTDIR)$(MANDIR)/man1/traceanalyze.1 \
		$(DESTDIR)$(COMPDIR)/traceanalyze

clean:
	rm -f traceanalyze libtraceanalyze.a $(TEST_BIN) src/*.o src/*/*.o src/*/*/*.o src/model/model_id.inc \
		src/analyses/gpu/roof_id.inc src/analyses/critical/crit_id.inc

.PHONY: all check test suites sanitize tsan deps demo valgrind bench lint install uninstall clean

# libFuzzer over the parser (clang): make fuzz FUZZ_SECONDS=600
FUZZ_SECONDS ?= 60
FUZZ_SRC := $(wildcard src/parse/*.c src/util/*.c) src/exec/db.c src/exec/cache.c \
	src/report/gate.c src/report/table.c src/report/stream.c \
	src/report/csv.c src/report/json.c src/report/format.c src/report/text.c
fuzz/fuzz_parse: $(FUZZ_SRC) tests/fuzz/fuzz_parse.c $(HEADERS)
	mkdir -p fuzz
	clang -g -O1 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -o $@ $(FUZZ_SRC) \
		tests/fuzz/fuzz_parse.c $(PKG_LIBS) -lcsv -lm

fuzz/fuzz_pickle: src/parse/pickle.c src/parse/gzread.c src/util/util.c tests/fuzz/fuzz_pickle.c $(HEADERS)
	mkdir -p fuzz
	clang -g -O1 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -o $@ src/parse/pickle.c src/parse/gzread.c \
		src/util/files.c src/util/util.c tests/fuzz/fuzz_pickle.c $(PKG_LIBS) -lm -lpthread

# the gzip reader through ISA-L and zlib: the same bytes and messages
fuzz/fuzz_gzread: src/parse/gzread.c src/util/files.c src/util/util.c tests/fuzz/fuzz_gzread.c $(HEADERS)
	mkdir -p fuzz
	clang -g -O1 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc -Isrc/parse $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -o $@ src/parse/gzread.c src/util/files.c \
		src/util/util.c tests/fuzz/fuzz_gzread.c $(PKG_LIBS) -lm -lpthread

fuzz: fuzz/fuzz_parse fuzz/fuzz_pickle fuzz/fuzz_gzread
	mkdir -p fuzz/corpus fuzz/corpus_pickle fuzz/corpus_gz
	for f in tests/fuzz/seed/*.json; do gzip -c "$$f" > "fuzz/corpus_gz/$${f##*/}.gz"; done
	cat fuzz/corpus_gz/basic.json.gz fuzz/corpus_gz/array.json.gz > fuzz/corpus_gz/two_members.gz
	./fuzz/fuzz_parse -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=512 \
		-max_len=65536 fuzz/corpus tests/fuzz/seed
	./fuzz/fuzz_pickle -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=512 \
		-max_len=65536 fuzz/corpus_pickle tests/fuzz/seed_pickle
	./fuzz/fuzz_gzread -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=512 \
		-max_len=65536 fuzz/corpus_gz

.PHONY: fuzz
