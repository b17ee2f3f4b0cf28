# cprof — build, test and demo.
#   make          build libcprof.so, the cprof tool and cprof.pc into build/
#   make check    install missing packages, build, run every test
#   make demo     install missing packages, build, profile examples/leak.c
#   make musl     build/musl/libcprof.so, for programs linked with musl (musl-gcc)
#   make fuzz     run each libFuzzer harness (tests/fuzz) for FUZZ_SECONDS (60)
#   make install  PREFIX=/usr/local

PREFIX  ?= /usr/local
B       := build
CC      ?= cc
# arm64 cross build (make arm64): compiler and the :arm64 .pc files
ARM64_CC ?= aarch64-linux-gnu-gcc
ARM64_PKG := /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig
CSTD    := -std=gnu11
WARN    := -Wall -Wextra -Werror
OPT     ?= -O2 -g
# Frame pointers everywhere: CPROF_UNWIND=fp must be able to walk through us.
BASE_CFLAGS := $(CSTD) $(WARN) $(OPT) -fno-omit-frame-pointer -D_GNU_SOURCE \
               -Iinclude -Isrc -I$(B)/gen $(CFLAGS)

pc = $(shell pkg-config --cflags --libs $(1) 2>/dev/null)

# --- the shared base (src/base): buffers, escaping, hashing ----------------
BASE_SRC := $(wildcard src/base/*.c)
BASE_OBJ := $(BASE_SRC:%.c=$(B)/pic/%.o)

# --- the format library (src/profile), shared by runtime and tool ---------
PROFILE_SRC := $(wildcard src/profile/*.c)
PROFILE_OBJ := $(PROFILE_SRC:%.c=$(B)/pic/%.o)

# --- the runtime (src/runtime) -> libcprof.so ------------------------------
RUNTIME_SRC := $(wildcard src/runtime/*.c)
RUNTIME_OBJ := $(RUNTIME_SRC:%.c=$(B)/pic/%.o)
RUNTIME_LIBS := -lunwind -lz -ldl -lpthread -lm

# --- the HTTP endpoints (src/http) -> libcprof-http.so ---------------------
HTTP_SRC := $(wildcard src/http/*.c)
# symtab.c (function names from .symtab, runtime code) names the frames of
# /debug/pprof/symbol as well.
HTTP_OBJ := $(HTTP_SRC:%.c=$(B)/pic/%.o) $(B)/pic/src/runtime/symtab.o

# --- the tool (src/tool) -> cprof ------------------------------------------
# One static library per layer, build/lib/<layer>.a, listed from the top
# down (the link order): a layer includes only the layers after it.
TOOL_LAYERS := ui driver report fetch graph symbolize
LAYERS      := $(TOOL_LAYERS) profile base
layer_src = $(if $(filter profile,$(1)),$(PROFILE_SRC),$(if $(filter base,$(1)),$(BASE_SRC),$(wildcard src/tool/$(1)/*.c)))
layer_obj = $(patsubst %.c,$(2)/%.o,$(call layer_src,$(1)))
TOOL_SRC := $(foreach l,$(TOOL_LAYERS),$(call layer_src,$(l)))
TOOL_OBJ := $(TOOL_SRC:%.c=$(B)/obj/%.o)
LAYER_LIBS := $(LAYERS:%=$(B)/lib/%.a)
ASAN_LAYER_LIBS := $(LAYERS:%=$(B)/asan/lib/%.a)
TOOL_LIBS := $(call pc,libdw libcurl libedit libmicrohttpd libpcre2-8) \
             $(shell pkg-config --exists libdebuginfod && echo -ldebuginfod) -lz -lm -lstdc++

TARGETS := $(B)/libcprof.so $(B)/cprof.pc
ifneq ($(HTTP_SRC),)
TARGETS += $(B)/libcprof-http.so
endif
ifneq ($(TOOL_SRC),)
TARGETS += $(B)/cprof
endif

all: $(TARGETS)

# Web assets (src/tool/ui/assets/*: scripts, styles, pages) compiled into the
# tool as C arrays: build/gen/assets.h, made before any tool object.
ASSETS := $(wildcard src/tool/ui/assets/*)
$(B)/gen/assets.h: $(ASSETS) scripts/embed.sh
	@mkdir -p $(dir $@)
	sh scripts/embed.sh $(ASSETS) > $@.tmp && mv -f $@.tmp $@

$(B)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -fPIC -fvisibility=hidden -ftls-model=initial-exec -MMD -MP -c -o $@ $<

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -MMD -MP -c -o $@ $<

# The base and the format library are position-independent: the shared
# objects link them.
$(B)/lib/profile.a: $(PROFILE_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^

$(B)/lib/base.a: $(BASE_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^

# The tool's layers, plain and (for the unit tests and tool_hostile.sh)
# under ASan/UBSan. .SECONDEXPANSION lets a library name its own objects.
.SECONDEXPANSION:
$(B)/lib/%.a: $$(call layer_obj,$$*,$(B)/obj)
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^

$(B)/asan/lib/%.a: $$(call layer_obj,$$*,$(B)/asan/obj)
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^

# Shared objects are linked to a temporary name and renamed: a test that
# preloads the library never sees half a file. libcprof.so is -z initfirst:
# its constructor runs before every other object's, so what their
# constructors allocate is sampled (api.c).
$(B)/libcprof.so: $(RUNTIME_OBJ) $(B)/lib/profile.a $(B)/lib/base.a
	$(CC) -shared -o $@.tmp $(RUNTIME_OBJ) $(B)/lib/profile.a $(B)/lib/base.a $(RUNTIME_LIBS) \
	    -Wl,--no-undefined -Wl,-soname,libcprof.so -Wl,-z,nodelete -Wl,-z,initfirst && mv -f $@.tmp $@

$(B)/libcprof-http.so: $(HTTP_OBJ) $(B)/lib/profile.a $(B)/lib/base.a $(B)/libcprof.so
	$(CC) -shared -o $@.tmp $(HTTP_OBJ) $(B)/lib/profile.a $(B)/lib/base.a $(call pc,libmicrohttpd) -lz -lm \
	    -L$(B) -lcprof -Wl,--no-undefined -Wl,-soname,libcprof-http.so && mv -f $@.tmp $@

$(TOOL_OBJ): | $(B)/gen/assets.h

$(B)/cprof: $(LAYER_LIBS)
	$(CC) -o $@ $(LAYER_LIBS) $(TOOL_LIBS)

$(B)/cprof.pc: cprof.pc.in
	@mkdir -p $(B)
	sed -e 's|@PREFIX@|$(PREFIX)|g' $< > $@

-include $(shell find $(B) -name '*.d' 2>/dev/null)
# A header that dependency files written before it moved (or went) still
# name: nothing to make, the objects that named it are rebuilt.
src/%.h: ;

# --- musl: libcprof.so for musl-linked programs -> build/musl/ ---------------
# `make musl` builds the runtime with musl-gcc (musl-tools) for programs
# linked against musl 1.2 (Alpine's), whose malloc is replaced by
# interposition as glibc's. No libunwind (the cfi walk and frame pointers
# unwind), no zlib (profiles are gzip of stored blocks, profile/gzstore.h);
# what needs glibc or those libraries refuses with one line (README).
# musl's headers come without the kernel's: build/musl/kinc links Debian's.
MUSL_CC ?= musl-gcc
MB := $(B)/musl
MUSL_OBJ := $(RUNTIME_SRC:%.c=$(MB)/pic/%.o)
# The runtime reads no profile: no decode.c (zlib's inflate) in the archive.
MUSL_LIB_OBJ := $(patsubst %.c,$(MB)/pic/%.o,$(filter-out src/profile/decode.c src/profile/zread.c,$(PROFILE_SRC)) $(BASE_SRC))
MUSL_KINC := $(MB)/kinc/.made
KERNEL_ASM := $(firstword $(wildcard /usr/include/$(shell $(CC) -print-multiarch 2>/dev/null)/asm) /usr/include/asm)

$(MUSL_KINC):
	@mkdir -p $(dir $@)
	ln -sfn /usr/include/linux $(MB)/kinc/linux
	ln -sfn /usr/include/asm-generic $(MB)/kinc/asm-generic
	ln -sfn $(KERNEL_ASM) $(MB)/kinc/asm
	@touch $@

$(MB)/pic/%.o: %.c $(MUSL_KINC)
	@mkdir -p $(dir $@)
	$(MUSL_CC) $(BASE_CFLAGS) -DCPROF_NO_LIBUNWIND -DCPROF_NO_ZLIB -isystem $(MB)/kinc \
	    -fPIC -fvisibility=hidden -ftls-model=initial-exec -MMD -MP -c -o $@ $<

$(MB)/lib.a: $(MUSL_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(MB)/libcprof.so: $(MUSL_OBJ) $(MB)/lib.a
	$(MUSL_CC) -shared -o $@.tmp $(MUSL_OBJ) $(MB)/lib.a -Wl,--no-undefined -Wl,-soname,libcprof.so \
	    -Wl,-z,nodelete -Wl,-z,initfirst && mv -f $@.tmp $@

musl: $(MB)/libcprof.so

# --- tests ------------------------------------------------------------------
# Unit tests: tests/unit/test_<module>.c, linked with what their first line
# names ("// links: ..."): source files (src/x/y.c), linker flags (-ldl), or
# layers of the tool (graph, report, ...; each stands for build/lib/<layer>.a
# and the test gets every layer below it too).
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
ASAN_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/asan/%)
# test_profiles checks the registry of profile kinds, whose rows name every
# kind's writer: it links the runtime's objects whole (those of today's
# sources, never a renamed file's stale object), and has no ASan twin, as
# ASan cannot wrap the runtime's malloc.
ASAN_BIN := $(filter-out $(B)/tests/asan/test_profiles,$(ASAN_BIN))
$(B)/tests/test_profiles: tests/unit/test_profiles.c $(RUNTIME_OBJ) $(B)/lib/profile.a $(B)/lib/base.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Itests -o $@ $< $(RUNTIME_OBJ) $(B)/lib/profile.a $(B)/lib/base.a $(UNIT_LIBS)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
unit_links = $(shell sed -n '1s|^// links:||p' $(1))
# The layers a test names, and those below them, in link order.
below = $(if $(1),$(wordlist $(firstword $(foreach i,$(shell seq $(words $(LAYERS))),$(if $(filter $(word $(i),$(LAYERS)),$(1)),$(i)))),$(words $(LAYERS)),$(LAYERS)))
link_args = $(foreach t,$(1),$(if $(filter $(LAYERS),$(t)),,$(t))) \
            $(patsubst %,$(2)/lib/%.a,$(call below,$(filter $(LAYERS),$(1))))
UNIT_LIBS := $(call pc,cmocka) $(TOOL_LIBS) -lunwind -ldl -lpthread

# A test is rebuilt when a source or header it compiles changes, not only
# its own file: sources named on its links line, and every header under src/.
.SECONDEXPANSION:
unit_deps = $(filter %.c,$(call unit_links,tests/unit/$(1).c)) $(ALL_HEADERS)
ALL_HEADERS := $(wildcard src/*/*.h src/*/*/*.h include/*.h)

$(B)/tests/%: tests/unit/%.c $$(call unit_deps,$$*) $(LAYER_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Itests -o $@ $< $(call link_args,$(call unit_links,$<),$(B)) $(UNIT_LIBS)

$(B)/tests/asan/%: tests/unit/%.c $$(call unit_deps,$$*) $(ASAN_LAYER_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN) -Itests -o $@ $< $(call link_args,$(call unit_links,$<),$(B)/asan) $(UNIT_LIBS)

# Test tools of the format library: profgen (random profiles), profdump.
$(B)/prof%: tests/gen/prof%.c tests/gen/gen.c tests/gen/gen.h $(B)/lib/profile.a $(B)/lib/base.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Itests -o $@ $< tests/gen/gen.c $(B)/lib/profile.a $(B)/lib/base.a -lz -lm

# cprof itself under ASan/UBSan, for the hostile-input tests (tool_hostile.sh).
TOOL_ASAN_OBJ := $(foreach l,$(LAYERS),$(call layer_obj,$(l),$(B)/asan/obj))

$(B)/asan/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN) -MMD -MP -c -o $@ $<

$(TOOL_ASAN_OBJ) $(UNIT_BIN) $(ASAN_BIN): | $(B)/gen/assets.h

$(B)/asan/cprof: $(ASAN_LAYER_LIBS)
	$(CC) $(SAN) -o $@ $(ASAN_LAYER_LIBS) $(TOOL_LIBS)

# libcprof.so under UBSan, for runtime_ubsan.sh (the multi-threaded e2e tests
# run with it preloaded). ASan and TSan cannot wrap it: see CONTRIBUTING.md, Testing notes.
UBSAN := -fsanitize=undefined -fno-sanitize-recover=all
# clang links its sanitizer runtime into executables only: a shared object
# takes the shared runtime, found through an rpath to clang's own folder.
CLANG_SHARED_SAN = -shared-libsan -Wl,-rpath,$(shell $(CC) -print-resource-dir)/lib/linux
UBSAN_LINK := $(UBSAN) $(if $(findstring clang,$(shell $(CC) --version 2>/dev/null | head -n1)),$(CLANG_SHARED_SAN))
UBSAN_RUNTIME_OBJ := $(patsubst $(B)/pic/%,$(B)/ubsan/pic/%,$(RUNTIME_OBJ) $(PROFILE_OBJ) $(BASE_OBJ))

$(B)/ubsan/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(UBSAN) -fPIC -fvisibility=hidden -ftls-model=initial-exec -MMD -MP -c -o $@ $<

$(B)/ubsan/libcprof.so: $(UBSAN_RUNTIME_OBJ)
	$(CC) -shared $(UBSAN_LINK) -o $@.tmp $^ $(RUNTIME_LIBS) \
	    -Wl,--no-undefined -Wl,-soname,libcprof.so -Wl,-z,nodelete -Wl,-z,initfirst && mv -f $@.tmp $@

# --- fuzzing -----------------------------------------------------------------
# tests/fuzz/fuzz_<name>.c: libFuzzer harnesses (clang). `make fuzz` runs each
# for FUZZ_SECONDS on its seed corpus tests/fuzz/corpus/<name> (what it finds
# goes to build/fuzz/, crashes as build/fuzz/crash-<name>-*). For make check,
# build/tests/replay_<name> is the same harness built with gcc and ASan/UBSan
# and a main (tests/fuzz/replay.c) that feeds it files: fuzz_replay.sh replays
# the corpora and tests/fuzz/crashes/<name>.
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
REPLAY_BIN := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=$(B)/tests/replay_%)
# Everything a harness may call: the tool's layers below the UIs (which hold
# main), the format library and the base, the HTTP query parsers.
FUZZ_LIB_SRC := $(foreach l,$(filter-out ui,$(LAYERS)),$(call layer_src,$(l))) src/http/query.c
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all

$(B)/fuzz/obj/%.o: %.c | $(B)/gen/assets.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(BASE_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_SRC:%.c=$(B)/fuzz/obj/%.o)
	$(FUZZ_CC) $(BASE_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(TOOL_LIBS)

$(B)/tests/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(B)/asan/obj/src/http/query.o \
                     $(ASAN_LAYER_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN) -o $@ $< tests/fuzz/replay.c $(B)/asan/obj/src/http/query.o \
	    $(ASAN_LAYER_LIBS) $(TOOL_LIBS)

fuzz: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do n=$${f##*/fuzz_}; mkdir -p $(B)/fuzz/found-$$n; \
	  echo "fuzz: $$n for $(FUZZ_SECONDS) s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=4096 -close_fd_mask=3 \
	      -artifact_prefix=$(B)/fuzz/crash-$$n- $(B)/fuzz/found-$$n tests/fuzz/corpus/$$n || exit 1; \
	done

# The arm64 build too where the cross compiler is (the arm64 tests skip
# without it).
tests: all $(UNIT_BIN) $(ASAN_BIN) $(B)/profgen $(B)/profdump $(B)/asan/cprof $(REPLAY_BIN) \
       $(B)/ubsan/libcprof.so $(if $(shell command -v $(MUSL_CC)),$(MB)/libcprof.so) \
       $(if $(shell command -v $(ARM64_CC) 2>/dev/null),arm64)

# --- arm64 (aarch64): a cross build into build/arm64/ ----------------------
# Debian's cross compiler and the :arm64 -dev packages (scripts/deps.sh);
# tests/e2e/arm64_*.sh run what it builds under qemu-aarch64.
arm64:
	$(MAKE) B=$(B)/arm64 CC=$(ARM64_CC) PKG_CONFIG_LIBDIR=$(ARM64_PKG) \
	    $(B)/arm64/libcprof.so $(B)/arm64/libcprof-http.so $(B)/arm64/cprof

deps:
	@sh scripts/deps.sh

check: deps
	$(MAKE) -j$$(nproc 2>/dev/null || echo 2) tests
	@sh tests/run.sh

# The suite beside two busy loops, as on a loaded CI machine.
check-stress: deps
	$(MAKE) -j$$(nproc 2>/dev/null || echo 2) tests
	@STRESS=2 sh tests/run.sh

demo: deps
	$(MAKE) -j$$(nproc 2>/dev/null || echo 2) all
	@sh examples/demo.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	    $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(B)/libcprof.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/cprof.h include/cprof_heap.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(B)/cprof.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	if [ -f $(B)/libcprof-http.so ]; then install -m 755 $(B)/libcprof-http.so $(DESTDIR)$(PREFIX)/lib/; fi
	if [ -f $(B)/cprof ]; then install -m 755 $(B)/cprof $(DESTDIR)$(PREFIX)/bin/; fi
	install -m 644 docs/cprof.1 $(DESTDIR)$(PREFIX)/share/man/man1/

clean:
	rm -rf $(B)

.PHONY: all arm64 tests deps check check-stress demo install clean fuzz musl
.SECONDARY:
