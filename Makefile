# cprof — build, test and demo.
#   make          build libcprof.so, the cprof tool and cprof.pc into build/
#   make check    install missing packages, build, run every test
#   make demo     install missing packages, build, profile examples/leak.c
#   make install  PREFIX=/usr/local

PREFIX  ?= /usr/local
B       := build
CC      ?= cc
CSTD    := -std=gnu11
WARN    := -Wall -Wextra -Werror
OPT     ?= -O2 -g
# Frame pointers everywhere: CPROF_UNWIND=fp must be able to walk through us.
BASE_CFLAGS := $(CSTD) $(WARN) $(OPT) -fno-omit-frame-pointer -D_GNU_SOURCE \
               -Iinclude -Isrc -I$(B)/gen $(CFLAGS)

pc = $(shell pkg-config --cflags --libs $(1) 2>/dev/null)

# --- the format library (src/profile), shared by runtime and tool ---------
PROFILE_SRC := $(wildcard src/profile/*.c)
PROFILE_OBJ := $(PROFILE_SRC:%.c=$(B)/pic/%.o)

# --- the runtime (src/runtime) -> libcprof.so ------------------------------
RUNTIME_SRC := $(wildcard src/runtime/*.c)
# symtab.c (function names from .symtab) also names the frames of the
# runtime's text profiles (stackprof.c).
RUNTIME_OBJ := $(RUNTIME_SRC:%.c=$(B)/pic/%.o) $(B)/pic/src/http/symtab.o
RUNTIME_LIBS := -lunwind -lz -ldl -lpthread -lm

# --- the HTTP endpoints (src/http) -> libcprof-http.so ---------------------
HTTP_SRC := $(wildcard src/http/*.c)
HTTP_OBJ := $(HTTP_SRC:%.c=$(B)/pic/%.o)

# --- the tool (src/tool) -> cprof ------------------------------------------
TOOL_SRC := $(wildcard src/tool/*.c)
TOOL_OBJ := $(TOOL_SRC:%.c=$(B)/obj/%.o)
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

# Web assets (src/tool/assets/*: scripts, styles, pages) compiled into the
# tool as C arrays: build/gen/assets.h, made before any tool object.
ASSETS := $(wildcard src/tool/assets/*)
$(B)/gen/assets.h: $(ASSETS) scripts/embed.sh
	@mkdir -p $(dir $@)
	sh scripts/embed.sh $(ASSETS) > $@.tmp && mv -f $@.tmp $@

$(B)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -fPIC -fvisibility=hidden -ftls-model=initial-exec -MMD -c -o $@ $<

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -MMD -c -o $@ $<

$(B)/libcprofile.a: $(PROFILE_OBJ)
	@rm -f $@
	ar rcs $@ $^

# Shared objects are linked to a temporary name and renamed: a test that
# preloads the library never sees half a file.
$(B)/libcprof.so: $(RUNTIME_OBJ) $(B)/libcprofile.a
	$(CC) -shared -o $@.tmp $(RUNTIME_OBJ) $(B)/libcprofile.a $(RUNTIME_LIBS) \
	    -Wl,--no-undefined -Wl,-soname,libcprof.so -Wl,-z,nodelete && mv -f $@.tmp $@

$(B)/libcprof-http.so: $(HTTP_OBJ) $(B)/libcprofile.a $(B)/libcprof.so
	$(CC) -shared -o $@.tmp $(HTTP_OBJ) $(B)/libcprofile.a $(call pc,libmicrohttpd) -lz -lm \
	    -L$(B) -lcprof -Wl,--no-undefined -Wl,-soname,libcprof-http.so && mv -f $@.tmp $@

$(TOOL_OBJ): | $(B)/gen/assets.h

$(B)/cprof: $(TOOL_OBJ) $(B)/libcprofile.a
	$(CC) -o $@ $(TOOL_OBJ) $(B)/libcprofile.a $(TOOL_LIBS)

$(B)/cprof.pc: cprof.pc.in
	@mkdir -p $(B)
	sed -e 's|@PREFIX@|$(PREFIX)|g' $< > $@

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# --- tests ------------------------------------------------------------------
# Unit tests: tests/unit/test_<module>.c, linked with the object files of the
# module they test (named in the test's first line: "// links: src/x/y.c ...").
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
ASAN_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/asan/%)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
unit_links = $(shell sed -n '1s|^// links:||p' $(1))
UNIT_LIBS := $(call pc,cmocka) $(TOOL_LIBS) -lunwind -ldl -lpthread

$(B)/tests/%: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Itests -o $@ $< $(call unit_links,$<) $(UNIT_LIBS)

$(B)/tests/asan/%: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN) -Itests -o $@ $< $(call unit_links,$<) $(UNIT_LIBS)

# Test tools of the format library: profgen (random profiles), profdump.
$(B)/prof%: tests/gen/prof%.c tests/gen/gen.c tests/gen/gen.h $(B)/libcprofile.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -Itests -o $@ $< tests/gen/gen.c $(B)/libcprofile.a -lz -lm

# cprof itself under ASan/UBSan, for the hostile-input tests (tool_hostile.sh).
TOOL_ASAN_OBJ := $(TOOL_SRC:%.c=$(B)/asan/obj/%.o) $(PROFILE_SRC:%.c=$(B)/asan/obj/%.o)

$(B)/asan/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN) -MMD -c -o $@ $<

$(TOOL_ASAN_OBJ) $(UNIT_BIN) $(ASAN_BIN): | $(B)/gen/assets.h

$(B)/asan/cprof: $(TOOL_ASAN_OBJ)
	$(CC) $(SAN) -o $@ $(TOOL_ASAN_OBJ) $(TOOL_LIBS)

tests: all $(UNIT_BIN) $(ASAN_BIN) $(B)/profgen $(B)/profdump $(B)/asan/cprof

deps:
	@sh scripts/deps.sh

check: deps
	$(MAKE) -j$$(nproc 2>/dev/null || echo 2) tests
	@sh tests/run.sh

demo: deps
	$(MAKE) -j$$(nproc 2>/dev/null || echo 2) all
	@sh examples/demo.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(B)/libcprof.so $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/cprof.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(B)/cprof.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	if [ -f $(B)/libcprof-http.so ]; then install -m 755 $(B)/libcprof-http.so $(DESTDIR)$(PREFIX)/lib/; fi
	if [ -f $(B)/cprof ]; then install -m 755 $(B)/cprof $(DESTDIR)$(PREFIX)/bin/; fi

clean:
	rm -rf $(B)

.PHONY: all tests deps check demo install clean
.SECONDARY:
