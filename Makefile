# The map of the course. `make help` lists every target with one line each.
#
# The runtime is built from one directory per chapter. Where each chapter's sources come from
# is chosen per build ("variant"), which is how the grader can test your chapter 2.2 against the
# reference for everything before it, and how `make test` proves every stub fails its tests:
#   IMPL=learner    your code in week1/ ... (the default)
#   IMPL=solutions  the reference in solutions/
#   REF="1.1 1.2"   these chapters from solutions/, whatever IMPL says (grader --ref-deps)
#   STUB="1.3"      these chapters from freshly generated stubs (maintainer checks)
# A variant builds into build/<variant>/: lib/libtshmem.a and bin/ (the PE test programs).
# Objects are shared between variants (build/obj/<source>-<flags>/): an object depends only on
# its chapter's source (yours, the reference or the stub) and the compiler flags, so the
# variant that takes chapter 1.3 from its stub compiles that chapter alone.
# Nothing here ever writes inside week1/ ... or solutions/.

SHELL   := /bin/bash
.DEFAULT_GOAL := all
# `make test` builds on every core (-j$(JOBS), each target's messages kept together), as the
# grader does (make_jobs); JOBS=1 builds one file at a time.
JOBS    ?= $(shell nproc 2>/dev/null || echo 1)
PARALLEL := -j$(JOBS) --output-sync=target
MPICC   ?= mpicc
CC      ?= cc
IMPL    ?= learner
REF     ?=
STUB    ?=
# Warnings are errors in CI and in `make test`; for your own edits they are shown, not fatal.
STRICT  ?= $(if $(CI),1,0)
WERROR  := $(if $(filter 1,$(STRICT)),-Werror)
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra $(WERROR)
INCLUDE := -Iinclude

ch_id  = $(word 1,$(subst :, ,$1))
ch_dir = $(word 2,$(subst :, ,$1))
PYTHON      ?= /usr/bin/python3

empty :=
space := $(empty) $(empty)
base_root = $(if $(filter solutions,$(IMPL)),solutions,$(if $(filter stubs,$(IMPL)),build/stubs,.))
src_root  = $(if $(filter $(call ch_id,$1),$(STUB)),build/stubs,$(if $(filter $(call ch_id,$1),$(REF)),solutions,$(base_root)))
# MUTANT=2.2/oneshot-no-done: the reference (IMPL=solutions) with one predicted mistake, the
# patch grader/chapters/2.2/mutants/oneshot-no-done.patch, applied to a copy of its chapter in
# build/mutants/; only the files it patches compile again, the rest is the reference's objects
# (`make mutants` runs every chapter's suite on each of them; grader/src/mutants.c).
MUTANT  ?=
VARIANT   := $(IMPL)$(if $(strip $(REF)),+ref-$(subst $(space),-,$(strip $(REF))))$(if $(strip $(STUB)),+stub-$(subst $(space),-,$(strip $(STUB))))$(if $(MUTANT),+mutant-$(subst /,-,$(MUTANT)))$(if $(SAN),+$(SAN))
BUILD     := build/$(VARIANT)

# ---- The chapters -------------------------------------------------------------------------------
# grader/course.json is the one list of chapters. tools/update-lists writes what lies between
# the two marker lines from it (make test's selftest says when it is out of date): edit
# course.json, never the block.
# BEGIN lists
# id:folder of every available chapter, in roadmap order: CHAPTERS go into libtshmem,
# GPU_CHAPTERS are CUDA + NVSHMEM (make gpu), PY_CHAPTERS a CPython module (make torch).
CHAPTERS := 1.1:week1/1.1-init 1.2:week1/1.2-symmetric-heap 1.3:week1/1.3-put-get \
            1.4:week1/1.4-signals-barriers 1.5:week1/1.5-ring 2.1:week2/2.1-buffers \
            2.2:week2/2.2-allreduce 2.3:week2/2.3-allgather 2.4:week2/2.4-overlap \
            2.5:week2/2.5-multi-node 2.6:week2/2.6-ucx-network 3.1:week3/3.1-moe-alltoall \
            3.2:week3/3.2-pipeline 3.4:week3/3.4-zero 3.5:week3/3.5-tensor-parallel \
            3.8:week3/3.8-lora-cache
GPU_CHAPTERS := 3.3:week3/3.3-gpu 3.7:week3/3.7-gpu-moe
PY_CHAPTERS := 3.6:week3/3.6-pytorch
# make pe-X_Y: all that the grader builds to run chapter X.Y's suite (its PE program,
# and those of the chapters its "also_runs" names).
pe-1_1: $(BUILD)/bin/pe_1_1
pe-1_2: $(BUILD)/bin/pe_1_2
pe-1_3: $(BUILD)/bin/pe_1_3
pe-1_4: $(BUILD)/bin/pe_1_4
pe-1_5: $(BUILD)/bin/pe_1_5
pe-2_1: $(BUILD)/bin/pe_2_1
pe-2_2: $(BUILD)/bin/pe_2_2
pe-2_3: $(BUILD)/bin/pe_2_3
pe-2_4: $(BUILD)/bin/pe_2_4
pe-2_5: $(BUILD)/bin/pe_2_5 $(BUILD)/bin/pe_2_4
pe-2_6: $(BUILD)/bin/pe_2_6 $(BUILD)/bin/pe_2_4 $(BUILD)/bin/pe_2_5
pe-3_1: $(BUILD)/bin/pe_3_1
pe-3_2: $(BUILD)/bin/pe_3_2
pe-3_4: $(BUILD)/bin/pe_3_4
pe-3_5: $(BUILD)/bin/pe_3_5
pe-3_6: $(BUILD)/bin/pe_3_6
pe-3_8: $(BUILD)/bin/pe_3_8
# A GPU chapter's names, tests and GPUs, for tools/gpu-env and tools/gpu-test on a GPU
# machine that may have no grader: make -s print-chapter ID=3.3.
CHAPTER_3.3 := id=3.3 week=3 slug=gpu kind=gpu tag=3_3 dir=week3/3.3-gpu book=book/3.3-gpu.md grading=grader/chapters/3.3 suite=test_3_3 suite_src=grader/chapters/3.3/test_3_3.cu pe=pe_3_3 pe_src=grader/chapters/3.3/pe_3_3.c bench=bench_3_3 bench_src=grader/chapters/3.3/bench_3_3.cu make_target=pe-3_3 min_gpus=2 all_gpus=0 gpu_tests=bootstrap,ring_shift,ring_bcast,allreduce,put
CHAPTER_3.7 := id=3.7 week=3 slug=gpu-moe kind=gpu tag=3_7 dir=week3/3.7-gpu-moe book=book/3.7-gpu-moe.md grading=grader/chapters/3.7 suite=test_3_7 suite_src=grader/chapters/3.7/test_3_7.cu pe=pe_3_7 pe_src=grader/chapters/3.7/pe_3_7.c bench=bench_3_7 bench_src=grader/chapters/3.7/bench_3_7.cu make_target=pe-3_7 min_gpus=1 all_gpus=1 gpu_tests=ring,dispatch,combine,layers,no_p2p,low_latency,allgather
# The README's commands: install what is missing, build, grade a week's chapters.
WEEKS := week1 week2 week3
week1: deps
week2: deps
week3: deps deps-torch
# make help's lines for them.
define HELP_WEEKS
@echo "  make week1        install what is missing, build your code, grade chapters 1.1-1.5"
@echo "  make week2        the same for chapters 2.1-2.6"
@echo "  make week3        the same for chapters 3.1-3.8"
@echo "                    (3.3 and 3.7 need GPUs and NVSHMEM: skipped, with the reason, elsewhere;"
@echo "                    make gpu builds and runs them)"
@echo "                    (3.6 needs PyTorch: make week3 installs it, as make deps-torch does)"
endef
# END lists

# SAN=address: the runtime, PE programs, benchmarks, suites and grader under AddressSanitizer
# and UndefinedBehaviorSanitizer (build/<variant>+address/, build/grader-address/);
# SAN=thread: the runtime and PE programs under ThreadSanitizer (build/<variant>+thread/).
# `make sanitize` runs the suites on them; tools/sanitize/ holds the sanitizers' settings.
SAN ?=
ifeq ($(SAN),address)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
             -fno-optimize-sibling-calls
else ifeq ($(SAN),thread)
# TSan does not model atomic_thread_fence (-Wtsan says so); the runtime orders its shared words
# with atomics, and uses fences only beside them.
SAN_FLAGS := -fsanitize=thread -Wno-tsan
else ifneq ($(SAN),)
$(error SAN must be address or thread, not '$(SAN)')
endif
RT_CFLAGS := $(CFLAGS) $(SAN_FLAGS)
GR_CFLAGS := $(CFLAGS) $(if $(filter address,$(SAN)),$(SAN_FLAGS))
GR_DIR    := build/grader$(if $(filter address,$(SAN)),-address)

ifeq ($(filter $(IMPL),learner solutions stubs),)
$(error IMPL must be learner, solutions or stubs, not '$(IMPL)')
endif

# The mutant's chapter, patch and copy (MUTANT=X.Y/name; see VARIANT above). A patch names
# files of its chapter in solutions/ (`diff -u` paths, applied as patch -p0 applies them), after
# header lines that patch skips (mistake:, page:, expect:).
ifneq ($(MUTANT),)
MUT_ID    := $(firstword $(subst /, ,$(MUTANT)))
MUT_NAME  := $(word 2,$(subst /, ,$(MUTANT)))
MUT_PATCH := grader/chapters/$(MUT_ID)/mutants/$(MUT_NAME).patch
MUT_CH    := $(filter $(MUT_ID):%,$(CHAPTERS) $(PY_CHAPTERS))
MUT_DIR   := $(call ch_dir,$(MUT_CH))
MUT_ROOT  := build/mutants/$(MUT_ID)-$(MUT_NAME)
MUT_OBJ   := build/obj/mutant-$(MUT_ID)-$(MUT_NAME)$(subst =,_,$(subst /,_,$(subst $(space),,$(CFLAGS))))$(if $(SAN),-$(SAN))
ifneq ($(IMPL),solutions)
$(error MUTANT=$(MUTANT) is a mutant of the reference: add IMPL=solutions)
endif
ifeq ($(wildcard $(MUT_PATCH)),)
$(error MUTANT=$(MUTANT): there is no $(MUT_PATCH) (MUTANT is CHAPTER/NAME, NAME.patch in the chapter's mutants/))
endif
ifeq ($(MUT_CH),)
$(error MUTANT=$(MUTANT): chapter $(MUT_ID) is not one whose reference builds here (a CPU or Python chapter of the Makefile's lists))
endif
MUT_PATCHED := $(shell sed -n 's|^+++ \([^[:space:]]*\).*|\1|p' $(MUT_PATCH))
ifeq ($(MUT_PATCHED),)
$(error $(MUT_PATCH) holds no diff: write one with diff -u (paths solutions/$(MUT_DIR)/FILE))
endif
ifneq ($(filter-out solutions/$(MUT_DIR)/%,$(MUT_PATCHED)),)
$(error $(MUT_PATCH) patches $(filter-out solutions/$(MUT_DIR)/%,$(MUT_PATCHED)): a mutant patches only its chapter's reference, solutions/$(MUT_DIR)/)
endif
MUT_SRC   := $(wildcard solutions/$(MUT_DIR)/*)
MUT_COPY  := $(patsubst solutions/%,$(MUT_ROOT)/solutions/%,$(MUT_SRC))
# What compiles again: the patched .c files; every .c of the chapter where it patches a header.
MUT_C     := $(if $(filter %.h,$(MUT_PATCHED)),$(filter %.c,$(MUT_SRC)),$(filter %.c,$(MUT_PATCHED)))
endif

HEADERS      := $(wildcard include/*.h)
SOLUTION_SRC := $(foreach c,$(CHAPTERS),$(wildcard solutions/$(call ch_dir,$c)/*.[ch]))
GPU_SOLUTION_SRC := $(foreach c,$(GPU_CHAPTERS),$(wildcard solutions/$(call ch_dir,$c)/*.cu \
                    solutions/$(call ch_dir,$c)/*.h))
PY_SOLUTION_SRC := $(foreach c,$(PY_CHAPTERS),$(wildcard solutions/$(call ch_dir,$c)/*.[ch] \
                   solutions/$(call ch_dir,$c)/*.py))
STUB_FILES   := $(patsubst solutions/%,build/stubs/%,$(SOLUTION_SRC) $(GPU_SOLUTION_SRC) \
                $(PY_SOLUTION_SRC))
# Where a chapter's objects go: by the source they come from and the flags (every flag that
# changes an object belongs in CFLAGS, which names the folder: build/obj/solutions-O2-g/).
src_tag      = $(if $(filter solutions,$(call src_root,$1)),solutions,$(if $(filter build/stubs,$(call src_root,$1)),stubs,learner))
OBJ_KEY      := $(subst =,_,$(subst /,_,$(subst $(space),,$(CFLAGS))))$(if $(SAN),-$(SAN))
obj_dir      = build/obj/$(call src_tag,$1)$(OBJ_KEY)
# A mutant's patched files compile into an object folder of its own; every other file is the
# reference's object.
obj_of       = $(if $(filter $2,$(MUT_C)),$(MUT_OBJ),$(call obj_dir,$1))/$(patsubst solutions/%.c,%.o,$2)
LIB_OBJS     := $(foreach c,$(CHAPTERS),$(foreach f,$(wildcard solutions/$(call ch_dir,$c)/*.c),\
                  $(call obj_of,$c,$f)))
LIB          := $(BUILD)/lib/libtshmem.a
# What a program linked with libtshmem needs besides: UCX (chapter 2.6's network), threads, libm.
RT_LIBS      := -lucp -lucs -lpthread -lm
# Everything that grades a chapter lives in its folder grader/chapters/<id>/ (suite_*.c, pe_*.c,
# bench_*.c, the GPU chapters' *.cu); each program is named after its source file.
GRADING      := $(sort $(wildcard grader/chapters/*))
PE_PROGS     := $(patsubst %.c,$(BUILD)/bin/%,$(notdir $(wildcard grader/chapters/*/pe_*.c)))
BENCH_PROGS  := $(patsubst %.c,$(BUILD)/bin/%,$(notdir $(wildcard grader/chapters/*/bench_*.c)))
SUITES       := $(patsubst %.c,$(GR_DIR)/%,$(notdir $(wildcard grader/chapters/*/suite_*.c)))
vpath pe_%.c $(GRADING)
vpath bench_%.c $(GRADING)
vpath suite_%.c $(GRADING)
HARNESS      := grader/harness/job.c grader/harness/report.c \
                grader/harness/sanitizer.c
GRADER_SRC   := $(wildcard grader/src/*.c)
GRADER_LIBS  := -ljansson -lncursesw
GRADER       := $(GR_DIR)/grader
# The grader's own unit tests: its modules (all but main.c) under Criterion.
UNIT_SRC     := $(wildcard grader/unit/*.c)
UNIT         := $(GR_DIR)/unit_tests
STUBGEN      := build/tools/stubgen
STUBGEN_PY   := build/tools/stubgen-py
# Stubs are needed only by variants that take a chapter from them.
NEEDS_STUBS  := $(if $(or $(strip $(STUB)),$(filter stubs,$(IMPL))),$(STUB_FILES))

.SECONDARY:
.PHONY: book check-book deps-book deps-torch
.PHONY: gpu gpu-test gpu-bench gpu-check torch
.PHONY: all help deps deps-hosts lib pe-programs bench-programs suites grader unit stubs \
        check-stubs lint sanitize sanitize-unit $(WEEKS) test test-hosts mutants \
        clean print-build-dir print-chapters print-chapter print-warnings

# Everything `grader test` and the dashboard use: your code's library and PE programs, the
# grader and the chapters' suites (the grader also builds a missing one itself).
all: lib pe-programs grader suites

help:
	@echo "The tshmem course. Quick start: make week1 (your chapters), make test (the course's own checks)."
	@echo
	@echo "  make              build what the grader and its dashboard use: your code, the PE"
	@echo "                    programs, the grader and the suites (then: build/grader/grader)"
	$(HELP_WEEKS)
	@echo "  make test         build everything with warnings as errors; every suite must pass on"
	@echo "                    solutions/ and fail on each chapter's stub; check stub drift; the"
	@echo "                    grader's unit and end-to-end tests (dashboard in tmux, watch);"
	@echo "                    make lint, make sanitize-unit and make test-hosts"
	@echo "  make mutants      each chapter's predicted mistakes, patched into the reference"
	@echo "                    (grader/chapters/X.Y/mutants/), must be caught by its tests, by"
	@echo "                    name and fast (MUTANTS=\"2.2\" narrows it; make test runs it)"
	@echo "  make test-hosts   chapter 2.5 and tshrun -H across two machines made of network"
	@echo "                    namespaces joined by a veth pair, ssh between them, and a Slurm "
	@echo "                    cluster on them (salloc, sbatch, scancel; root; skipped, with the"
	@echo "                    reason, where namespaces are not allowed; make test runs it);"
	@echo "                    BENCH=1 adds grader bench 2.5 and 2.6 over the link"
	@echo "  make lib          build build/<impl>/lib/libtshmem.a (IMPL=learner|solutions)"
	@echo "  make pe-programs  build the PE-side test programs of a variant (IMPL, REF, STUB)"
	@echo "  make bench-programs  build the chapter benchmarks of a variant (build/<impl>/bin/bench_*)"
	@echo "  make suites       build the Criterion test suites (build/grader/suite_*)"
	@echo "  make grader       build the grader (build/grader/grader; try: build/grader/grader --help)"
	@echo "  make unit         build the grader's own unit tests (build/grader/unit_tests)"
	@echo "  make stubs        generate every chapter's stub from solutions/ into build/stubs/"
	@echo "  make check-stubs  check that the committed stubs in week1/ equal a fresh generation"
	@echo "  make torch        build chapter $(call ch_id,$(PY_CHAPTERS))'s Python module into build/<impl>/python/tshmem; run"
	@echo "                    with PYTHONPATH=build/<impl>/python tools/tshrun -np N /usr/bin/python3 prog.py"
	@echo "  make lint         static analysis (cppcheck) of solutions/, grader/ and tools/, and every"
	@echo "                    global the reference library exports starts with tshmem_ (tools/check-symbols)"
	@echo "  make sanitize     your code's tests under AddressSanitizer+UBSan, and 2.4/2.5/2.6/3.8 under"
	@echo "                    ThreadSanitizer (IMPL=solutions: the reference; SAN_CHAPTERS=1.3)"
	@echo "  make sanitize-unit  the grader's unit tests under ASan+UBSan (make test runs it)"
	@echo "  make gpu          build the GPU chapters ($(GPU_IDS): CUDA + NVSHMEM) with nvcc into"
	@echo "                    build/gpu/<impl>/; says why not where nvcc or NVSHMEM is missing"
	@echo "  make gpu-test     run their tests (skipped, with the reason, without the GPUs they need)"
	@echo "  make gpu-bench    their studies (grader bench does them too): NCCL, CUDA IPC, NVSHMEM"
	@echo "  make book         build this course's book as a static site in build/book/ (open"
	@echo "                    build/book/index.html); installs pandoc, graphviz, gnuplot"
	@echo "  make check-book   the book's checks (make test runs them): the site builds without"
	@echo "                    warnings, links and images resolve, listings compile, the pages"
	@echo "                    agree with the tree (tools/check-spec), screenshots"
	@echo "  make deps         install missing Debian packages (apt-get, as root or through sudo)"
	@echo "  make deps-book    the same, with what the book needs"
	@echo "  make deps-hosts   the same, with what make test-hosts needs (openssh-server, Slurm, munge)"
	@echo "  make deps-torch   the same, with PyTorch (Debian's python3-torch, large) for chapter $(call ch_id,$(PY_CHAPTERS))"
	@echo "  make clean        remove build/"
	@echo
	@echo "Variables: IMPL=learner|solutions, REF=\"1.1 1.2\" (chapters from the reference),"
	@echo "           STATUS=1 (make weekN fails when a test fails, for scripts; else 0 once they ran),"
	@echo "           STRICT=1 (warnings are errors), CFLAGS (default -O2 -g),"
	@echo "           JOBS=N (files make test and make lint build at once; default: every core)."

deps:
	@tools/install-deps

deps-book:
	@tools/install-deps --book

deps-hosts:
	@tools/install-deps --hosts
deps-torch:
	@tools/install-deps --torch

# ---- The runtime library of one variant -------------------------------------------------------
lib: $(LIB)

$(LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	ar rcs $@ $^

define chapter_rules
$(call obj_dir,$1)/$(call ch_dir,$1)/%.o: $(call src_root,$1)/$(call ch_dir,$1)/%.c $(HEADERS) \
  $(wildcard $(call src_root,$1)/$(call ch_dir,$1)/*.h) | $(NEEDS_STUBS)
	@mkdir -p $$(@D)
	@echo "$$(MPICC) ... -c $$< -o $$@"
	@$$(MPICC) $$(CSTD) $$(RT_CFLAGS) -fPIC $$(WARN) $$(INCLUDE) -c $$< -o $$@.$$$$$$$$ 2>$$@.warnings; \
	  s=$$$$?; cat $$@.warnings >&2; [ $$$$s -eq 0 ] && mv -f $$@.$$$$$$$$ $$@
endef
# What the compiler said of each object stays beside it (NAME.o.warnings) for as long as the
# object: the grader shows a learner's warnings on every run, not only on the run that compiled.
$(foreach c,$(CHAPTERS),$(eval $(call chapter_rules,$c)))

# A mutant: its chapter copied from solutions/ and patched (again whenever the patch or the
# reference changes; the copy's files get the stamp's time, so that nothing else rebuilds).
ifneq ($(MUTANT),)
$(MUT_OBJ)/%.o: $(MUT_ROOT)/solutions/%.c $(HEADERS) $(MUT_ROOT)/.applied
	@mkdir -p $(@D)
	@echo "$(MPICC) ... -c $< -o $@"
	@$(MPICC) $(CSTD) $(RT_CFLAGS) -fPIC $(WARN) $(INCLUDE) -c $< -o $@

$(MUT_ROOT)/.applied: $(MUT_PATCH) $(MUT_SRC)
	@rm -rf $(MUT_ROOT) && mkdir -p $(dir $(MUT_ROOT)/solutions/$(MUT_DIR)) && \
	  cp -r solutions/$(MUT_DIR) $(dir $(MUT_ROOT)/solutions/$(MUT_DIR))
	@patch -p0 -F0 -f -s --no-backup-if-mismatch --reject-file=- -d $(MUT_ROOT) \
	  <$(MUT_PATCH) >$(MUT_ROOT).log 2>&1 || { cat $(MUT_ROOT).log; echo "make: $(MUT_PATCH)" \
	  "no longer applies to solutions/$(MUT_DIR)/: write it again from the reference (diff -u)"; \
	  rm -rf $(MUT_ROOT); exit 1; }
	@touch $@ && touch -r $@ $(MUT_COPY)

$(MUT_COPY): $(MUT_ROOT)/.applied ;
endif

# ---- PE-side test programs, linked against the variant's library ------------------------------
pe-programs: $(PE_PROGS)

$(BUILD)/bin/pe_%: pe_%.c $(wildcard grader/pe/*.h grader/chapters/*/pe_*.h) $(HEADERS) $(LIB)
	@mkdir -p $(@D)
	$(MPICC) $(CSTD) $(RT_CFLAGS) $(WARN) $(INCLUDE) -Igrader/pe $< $(LIB) $(RT_LIBS) -o $@

# ---- Chapter 3.6: the Python module tshmem (C extension + Python part) ----------------------
# -fPIC above lets the static libtshmem go into this shared object. The module is compiled
# without _POSIX_C_SOURCE on the command line: Python.h sets the feature macros itself.
PY_SRC_DIR  := $(if $(filter $(MUT_ID),$(call ch_id,$(PY_CHAPTERS))),$(MUT_ROOT)/solutions,$(call \
               src_root,$(PY_CHAPTERS)))/$(call ch_dir,$(PY_CHAPTERS))
PY_OUT      := $(BUILD)/python/tshmem
TORCH_FILES := $(PY_OUT)/_tshmem.so $(PY_OUT)/__init__.py $(PY_OUT)/ddp.py
NEEDS_PY_STUBS := $(if $(filter build/stubs/%,$(PY_SRC_DIR)),$(filter build/stubs/$(call \
                  ch_dir,$(PY_CHAPTERS))/%,$(STUB_FILES)))

torch: $(TORCH_FILES)

PY_C_SRC    := $(if $(filter $(MUT_ID),$(call ch_id,$(PY_CHAPTERS))),$(filter %.c %.h,$(MUT_COPY)),\
               $(wildcard $(PY_SRC_DIR)/*.[ch]))

$(PY_OUT)/_tshmem.so: $(NEEDS_PY_STUBS) $(PY_C_SRC) $(HEADERS) $(LIB)
	@mkdir -p $(@D)
	@inc=$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])') && \
	  [ -f "$$inc/Python.h" ] || { echo "make torch: Python.h is missing: apt-get install" \
	  "python3-dev (or make deps)" >&2; exit 1; } && \
	  echo "$(MPICC) -shared ... -o $@" && \
	  $(MPICC) -std=c11 $(CFLAGS) -fPIC -shared $(WARN) $(INCLUDE) -I$$inc \
	    $(filter %.c,$^) $(LIB) $(RT_LIBS) -o $@

$(PY_OUT)/%.py: $(PY_SRC_DIR)/%.py
	@mkdir -p $(@D)
	@cp $< $@

# The Python PE program and benchmark start from small C launchers that need the module.
$(BUILD)/bin/pe_3_6 $(BUILD)/bin/bench_3_6: $(TORCH_FILES)

# ---- Chapter benchmarks, linked against the variant's library -------------------------------
bench-programs: $(BENCH_PROGS)

$(BUILD)/bin/bench_%: bench_%.c $(wildcard grader/bench/*.h) $(HEADERS) $(LIB)
	@mkdir -p $(@D)
	$(MPICC) $(CSTD) $(RT_CFLAGS) $(WARN) $(INCLUDE) -Igrader/bench $< $(LIB) $(RT_LIBS) -o $@

# ---- Criterion suites and the grader (independent of the variant) -----------------------------
suites: $(SUITES)

$(GR_DIR)/suite_%: suite_%.c grader/tests/suite.h $(HARNESS) $(wildcard grader/harness/*.h)
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(GR_CFLAGS) $(WARN) -Igrader/harness -Igrader/tests $(INCLUDE) $< $(HARNESS) -lcriterion -ljansson -o $@

grader: $(GRADER)

$(GRADER): $(GRADER_SRC) $(wildcard grader/src/*.h grader/harness/*.h) $(HARNESS)
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(GR_CFLAGS) $(WARN) -Igrader/harness $(GRADER_SRC) $(HARNESS) $(GRADER_LIBS) -o $@

unit: $(UNIT)

$(UNIT): $(UNIT_SRC) $(wildcard grader/unit/*.h) $(GRADER_SRC) $(wildcard grader/src/*.h grader/harness/*.h) $(HARNESS)
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(GR_CFLAGS) $(WARN) -Igrader/src -Igrader/harness $(UNIT_SRC) \
	    $(filter-out grader/src/main.c,$(GRADER_SRC)) $(HARNESS) -lcriterion $(GRADER_LIBS) -o $@

# ---- Stubs: generated from solutions/, committed in week1/ ... --------------------------------
$(STUBGEN): tools/stubgen.c
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(CFLAGS) -Wall -Wextra -Werror $< -o $@

stubs: $(STUB_FILES)

build/stubs/%: solutions/% $(STUBGEN)
	@$(STUBGEN) $< $@

$(STUBGEN_PY): tools/stubgen-py.c
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(CFLAGS) -Wall -Wextra -Werror $< -o $@

build/stubs/%.py: solutions/%.py $(STUBGEN_PY)
	@$(STUBGEN_PY) $< $@

check-stubs: $(STUB_FILES)
	@tools/check-stubs

# ---- Static analysis: cppcheck over solutions/, grader/ and tools/ (make test runs it) ----------
# .cppcheck/tshmem.cfg tells cppcheck what the sources cannot (noreturn functions, Criterion's
# Test macro); .cppcheck/suppressions.txt lists each finding that is not a defect, with why.
# tools/testdata holds the stub generator's fixtures: inputs, not code that runs.
LINT_FLAGS := -q --error-exitcode=1 --std=c11 --library=.cppcheck/tshmem.cfg \
              --enable=warning,portability,performance --inline-suppr \
              --suppressions-list=.cppcheck/suppressions.txt --suppress=missingIncludeSystem \
              -i tools/testdata -Iinclude -Igrader/harness -Igrader/src -Igrader/tests \
              -Igrader/pe -Igrader/bench -Igrader/gpu --template='{file}:{line}: {severity} [{id}] {message}'

lint:
	@cppcheck -j $(JOBS) $(LINT_FLAGS) solutions grader tools
	@tools/testdata/symbols/run-tests.sh && $(MAKE) -s IMPL=solutions lib && tools/check-symbols build/solutions/lib/libtshmem.a
	@if $(CC) $(CSTD) -Igrader/harness -M $(GRADER_SRC) | grep -q criterion/; then echo "make lint: grader/src includes a Criterion header (through grader/harness?): only the suites and unit tests may"; exit 1; fi

# ---- Sanitizers: every suite on a build under ASan+UBSan, the threaded chapters under TSan --------
# IMPL=learner (your code, the default) or IMPL=solutions; SAN_CHAPTERS / TSAN_CHAPTERS choose
# what runs (a chapter id, weekN or all). tools/sanitize/ holds the settings and the
# suppressions of Open MPI's own findings, each with its reason. The tests' timeouts are
# scaled: a sanitized PE runs several times slower, it does not hang more.
SAN_CHAPTERS  ?= all
# all, and weekN, mean the chapters whose PEs are C programs linked with libtshmem. 3.6's PEs
# are CPython with PyTorch, and 3.3's and 3.7's run on GPUs: neither is built with a sanitizer
# (an ASan build of 3.6's module cannot even be imported by Debian's Python).
SAN_IDS       = $(foreach c,$(CHAPTERS),$(call ch_id,$c))
SAN_NOT       = $(foreach c,$(PY_CHAPTERS) $(GPU_CHAPTERS),$(call ch_id,$c))
# 2.6: the network's helper thread and the program share the UCX worker under one lock. 3.8:
# across virtual nodes a home's cache words are changed both by its own thread and by chapter
# 2.5's proxy thread serving the other node's pins and gets.
TSAN_CHAPTERS ?= 2.4 2.5 2.6 3.8
SAN_IMPL      = $(if $(filter solutions,$(IMPL)),--impl solutions)
SAN_ENV       = TSHMEM_TEST_TIMEOUT_SCALE=4 \
                ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:detect_stack_use_after_return=0 \
                LSAN_OPTIONS=suppressions=$(CURDIR)/tools/sanitize/lsan.supp:print_suppressions=0 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Open MPI is not built with TSan: TSan sees only the C library calls it makes (its locks,
# memcpy), never the atomics that order them, and reports races and "unlock of an unlocked
# mutex" inside it. ignore_noninstrumented_modules=1 makes TSan ignore the calls that come from
# code not built with TSan (Open MPI, its components, PMIx, libevent); tshmem's code, built
# with TSan, stays checked, its calls of memcpy and pthread included (tools/sanitize/tsan.supp).
# UCX_MEM_MMAP_HOOK_MODE=none: UCX (which Open MPI's UCX components and chapter 2.6 load)
# patches madvise and mmap to hear of unmapped memory; glibc calls madvise on a thread's stack
# as the thread ends, after TSan has let the thread go, and TSan's lock interceptor that the hook
# reaches then crashes the PE (signal 11 in every PE program, at its end, when Open MPI's
# threads end). Without the hooks UCX may cache fewer memory registrations: slower at most.
TSAN_ENV      = UCX_MEM_MMAP_HOOK_MODE=none \
                TSAN_OPTIONS=suppressions=$(CURDIR)/tools/sanitize/tsan.supp:halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1

# A test that fails on a sanitizer's report saves its job's whole output under build/sanitizer/
# (the message names the file); each run starts that folder afresh.
sanitize: deps
	@$(MAKE) --no-print-directory -s SAN=address grader suites
	@$(MAKE) --no-print-directory -s grader suites
	@rm -rf build/sanitizer
	@status=0; \
	for ch in $(foreach s,$(SAN_CHAPTERS),$(if $(filter all,$s),$(SAN_IDS),$(if $(filter \
	    week%,$s),$(filter $(patsubst week%,%,$s).%,$(SAN_IDS)),$s))); do \
	  case " $(SAN_NOT) " in *" $$ch "*) echo "== $$ch is not run under the sanitizers: its" \
	    "PEs are Python or GPU programs, which are not built with them"; continue;; esac; \
	  echo "== $$ch under AddressSanitizer and UndefinedBehaviorSanitizer"; \
	  $(SAN_ENV) SAN=address build/grader-address/grader test $$ch $(SAN_IMPL) || status=1; \
	done; \
	for ch in $(TSAN_CHAPTERS); do \
	  echo "== $$ch under ThreadSanitizer"; \
	  $(SAN_ENV) $(TSAN_ENV) SAN=thread build/grader/grader test $$ch $(SAN_IMPL) || status=1; \
	done; exit $$status

# The part of it that make test runs on every submission: the grader's unit tests (its parsers
# of course.json, the progress file, benchmark lines, cards) under ASan+UBSan. Seconds, where
# `make sanitize` runs every suite again at several times its cost (see MAINTAINING.md).
sanitize-unit:
	@$(MAKE) --no-print-directory -s SAN=address unit
	@$(SAN_ENV) TSHMEM_ROOT=$(CURDIR) build/grader-address/unit_tests --jobs=2

# ---- Chapters 3.3 and 3.7 on real GPUs: nvcc + NVSHMEM (+ NCCL for the benchmarks) -----------
# tools/gpu-env finds nvcc, NVSHMEM (NVSHMEM_HOME, or the Python wheel nvidia-nvshmem) and NCCL
# (NCCL_HOME, or the wheel nvidia-nccl) and says what is missing; the CPU course needs none.
# Every GPU chapter builds into build/gpu/<impl>/ (test_3_3, bench_3_3, test_3_7, ...).
GPU_ROOT   = $(if $(filter solutions,$(IMPL)),solutions/,$(if $(filter stubs,$(IMPL)),build/stubs/))
GPU_BUILD  = build/gpu/$(IMPL)
GPU_DEPS   = $(if $(filter stubs,$(IMPL)),$(filter build/stubs/week3/%,$(STUB_FILES)))
GPU_IDS    = $(foreach c,$(GPU_CHAPTERS),$(call ch_id,$c))

gpu: $(GPU_DEPS)
	@$(foreach c,$(GPU_CHAPTERS),tools/gpu-env --build $(GPU_ROOT)$(call ch_dir,$c) $(GPU_BUILD) $(call ch_id,$c) && ) true

# tools/gpu-test exits 77 where the machine lacks the GPUs or NVSHMEM: skipped, not an error.
gpu-test: gpu
	@$(foreach i,$(GPU_IDS),{ tools/gpu-test --chapter $i --impl $(IMPL) || [ $$? -eq 77 ]; } && ) true

gpu-bench: gpu
	@$(foreach i,$(GPU_IDS),{ tools/gpu-test --chapter $i --impl $(IMPL) --bench || [ $$? -eq 77 ]; } && ) true

# nvcc's compile of every GPU chapter's solution and stub, of chapter 3.6's GPU module and of
# 3.8's GPU study (make test runs it; skipped, with the reason, where nvcc or NVSHMEM is missing).
gpu-check: $(filter build/stubs/week3/%,$(STUB_FILES))
	@tools/gpu-env --compile-only $(foreach c,$(GPU_CHAPTERS),solutions/$(call ch_dir,$c) build/stubs/$(call ch_dir,$c))
	@tools/gpu-torch --compile-only
	@tools/gpu-lora --compile-only
	@tools/gpu-nvlink --compile-only

# ---- The two commands of the README -----------------------------------------------------------
# (what each week needs besides deps is in the chapter lists above)
# Tests that fail are the course's normal state, not make's error: the status is 0 once the
# tests ran (STATUS=1 gives the grader's own: 1 when a test failed, for scripts).
$(WEEKS):
	@echo "Building the grader and the chapters' tests (a minute or two the first time) ..."
	@$(MAKE) --no-print-directory -s grader suites
	@$(GRADER) test $@ || { rc=$$?; [ $$rc -eq 1 ] && [ "$(STATUS)" != 1 ]; } || exit $$rc

# Every phase runs, even after one failed, so that one run lists everything that is wrong.
# The book's checks (mostly one core of pandoc, compilers and a browser) and the two-machine
# check (test-hosts, which mostly waits for its hosts' sshd and namespaces, each host in
# namespaces of its own) run beside the grader's selftest, and print their lines after it.
test: deps deps-book deps-hosts deps-torch
	@$(MAKE) --no-print-directory -s $(PARALLEL) STRICT=1 grader suites unit stubs $(STUBGEN)
	@$(MAKE) --no-print-directory -s $(PARALLEL) STRICT=1 IMPL=solutions lib pe-programs bench-programs
	@status=0; hosts_log=build/test-hosts.log; site_log=build/check-site.log; \
	  tools/test-hosts >$$hosts_log 2>&1 & hosts=$$!; \
	  tools/check-site >$$site_log 2>&1 & site=$$!; \
	  tools/check-tshrun || [ $$? -eq 77 ] || status=1; \
	  $(GRADER) selftest || status=1; \
	  wait $$site || status=1; cat $$site_log; \
	  wait $$hosts; rc=$$?; cat $$hosts_log; [ $$rc -eq 0 ] || [ $$rc -eq 77 ] || status=1; \
	  exit $$status

# Every chapter's predicted mistakes (grader/chapters/X.Y/mutants/*.patch), each built as a
# variant of the reference (MUTANT=X.Y/NAME) and caught by its suite, two side by side; make
# test runs them in the selftest. MUTANTS="2.2 3.4" narrows it to those chapters.
MUTANTS ?=
mutants:
	@$(MAKE) --no-print-directory -s $(PARALLEL) STRICT=1 grader suites
	@$(MAKE) --no-print-directory -s $(PARALLEL) STRICT=1 IMPL=solutions lib
	@$(GRADER) mutants $(MUTANTS)

# Two machines on this one (tools/test-hosts): exit status 77 means skipped, with the reason.
test-hosts: deps-hosts
	@$(MAKE) --no-print-directory -s STRICT=1 IMPL=solutions pe-programs bench-programs grader
	@tools/test-hosts $(if $(BENCH),--bench) || [ $$? -eq 77 ]

# ---- The book: book/*.md, diagrams and plots rendered into a static site ---------------------
# tools/build-book says how (pandoc, graphviz, gnuplot); tools/check-site checks the result.
book: deps-book
	@tools/build-book

check-book: deps-book
	@tools/check-site

clean:
	rm -rf build

# ---- For the grader: facts of this Makefile, printed one per line -----------------------------
print-build-dir:
	@echo $(BUILD)

# The compiler's warnings on the learner's own files of this variant (grader test shows them).
print-warnings:
	@cat /dev/null $(wildcard $(patsubst %.o,%.o.warnings,$(filter build/obj/learner%,$(LIB_OBJS))))

# A GPU chapter's names and tests as shell words (tools/gpu-env, tools/gpu-test): ID=3.3.
print-chapter:
	@$(if $(CHAPTER_$(ID)),printf '%s\n' $(CHAPTER_$(ID)),echo "no GPU chapter '$(ID)' in the Makefile's lists" >&2; exit 2)

# In roadmap order: a CPU chapter after a GPU one (3.4 after 3.3) sorts between the two lists.
print-chapters:
	@printf '%s\n' $(CHAPTERS) $(GPU_CHAPTERS) $(PY_CHAPTERS) | sort -t: -k1,1V
