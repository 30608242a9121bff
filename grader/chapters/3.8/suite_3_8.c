/* suite_3_8.c: chapter 3.8, a LoRA adapter cache in symmetric memory: insert, pin, replace and
 * evict by one-sided atomics; no torn blob under concurrent replacement; CLOCK evicts only
 * unpinned entries; quotas and tenant isolation; the serving loop against the one-process
 * reference that reads each adapter from its file. On one node and across virtual nodes
 * (TSHMEM_PES_PER_NODE: tshmem_ptr does not reach the other node's homes, so pins read with
 * gets and the atomics go through chapter 2.5's transport). */
#include "suite.h"

#define CH "3.8"
#define PROG "pe_3_8"
#define NODES2 ENV("TSHMEM_PES_PER_NODE=2")

Test(ch3_8, insert_pin_replace_evict, .description = "every PE inserts 4 keys for 2 tenants; every PE pins every key (version 1, every row, read and zero-copy); replace gives version 2 everywhere; a pin held across a replacement keeps the old blob; an evicted key is a miss; each home's slot counts and usage words match its live entries. 1, 2, 4, 6 PEs, and 4 PEs on 2 virtual nodes")
{
    expect_ok_on(CH, PROG, "basic", ARGS("-"), NULL, 60, (int[]){1, 2, 4, 6, END_PES});
    expect_ok_on(CH, PROG, "basic", ARGS("-"), NODES2, 60, (int[]){4, END_PES});
}

Test(ch3_8, readers_never_see_a_torn_blob, .description = "PE 0 replaces one 16 KiB blob 200 times (holding a pin across every eighth replacement) while every other PE pins, reads and re-reads it in place: each blob carries its version in every row, and no reader sees two versions in one blob or a version go back; afterwards one slot is in use. 1, 2, 4, 6 PEs, and 4 PEs on 2 virtual nodes (the home on the other node)")
{
    expect_ok_on(CH, PROG, "torn", ARGS("200", "16384"), NULL, 90, (int[]){1, 2, 4, 6, END_PES});
    expect_ok_on(CH, PROG, "torn", ARGS("60", "16384"), NODES2, 90, (int[]){4, END_PES});
}

Test(ch3_8, full_cache_evicts_only_unpinned, .description = "a tenant's quota of n + 3 slots at home PE 0 full: its insert of another tenant's key and of its own key are refused and every entry, its own included, stays; one entry pinned by each PE: n + 3 more inserts each evict an unpinned entry (CLOCK), the pinned ones stay, exactly the quota is live; with every entry pinned, insert is refused with a sentence and another tenant still inserts. 1, 2, 4 PEs, and 4 PEs on 2 virtual nodes")
{
    expect_ok_on(CH, PROG, "full", ARGS("-"), NULL, 60, (int[]){1, 2, 4, END_PES});
    expect_ok_on(CH, PROG, "full", ARGS("-"), NODES2, 60, (int[]){4, END_PES});
}

Test(ch3_8, quotas_hold_under_concurrent_inserts, .description = "every PE inserts 24 keys into home PE 0 for two tenants with quotas 3 and 5, all at once: no tenant ever holds more slots than its quota, and at the end each holds exactly its quota, usage words equal to slots owned. 2, 4, 6 PEs, and 6 PEs on 3 virtual nodes")
{
    expect_ok_on(CH, PROG, "quota", ARGS("24"), NULL, 90, (int[]){2, 4, 6, END_PES});
    expect_ok_on(CH, PROG, "quota", ARGS("12"), ENV("TSHMEM_PES_PER_NODE=2"), 90,
                 (int[]){6, END_PES});
}

Test(ch3_8, tenants_are_isolated, .description = "tenant 0 pins, replaces, evicts and inserts every key of tenants 1 and 2, reads and unpins through their references, and through references with slots out of range, a home past the last PE, a moved slot: each refused with a sentence naming the tenant, the key and the owner; every other tenant's bytes, versions, slot counts and usage words are unchanged. 2, 4 PEs, and 4 PEs on 2 virtual nodes. Before that, the slot a tenant's CLOCK looks at is freed and taken by another tenant for a key of the same number before CLOCK locks its set (made to happen by the cache's lock hook): the other tenant's entry stays. 1, 2 PEs, and 4 PEs on 2 virtual nodes (the home on the other node)")
{
    expect_ok_on(CH, PROG, "race", ARGS("-"), NULL, 60, (int[]){1, 2, END_PES});
    expect_ok_on(CH, PROG, "race", ARGS("-"), NODES2, 60, (int[]){4, END_PES});
    expect_ok_on(CH, PROG, "isolation", ARGS("-"), NULL, 60, (int[]){2, 4, END_PES});
    expect_ok_on(CH, PROG, "isolation", ARGS("-"), NODES2, 60, (int[]){4, END_PES});
}

Test(ch3_8, serving_matches_reference, .description = "the serving loop: hidden 32, rank 4, 3 layers, 24 adapters of 2 tenants (quota 4 each: the cache holds a third of them), 10 batches of 8 Zipf(1.1) requests per PE: every output equals the one-process reference that reads the adapter from its file, bit for bit; hits and misses both happen. 1, 2, 4, 6 PEs, and 4 PEs on 2 virtual nodes")
{
    expect_ok_on(CH, PROG, "serve", ARGS("32", "4", "3", "24", "10", "8", "4"), NULL, 90,
                 (int[]){1, 2, 4, 6, END_PES});
    expect_ok_on(CH, PROG, "serve", ARGS("32", "4", "3", "24", "6", "8", "4"), NODES2, 90,
                 (int[]){4, END_PES});
}

Test(ch3_8, misuse_is_a_sentence, .description = "a blob larger than a slot, replace and evict of an unknown key, pin of an unknown key, unpin without pin, a second unpin, a read after unpin, evict of a pinned key: each returns its code and a sentence saying what and why; 2 PEs")
{
    expect_ok_on(CH, PROG, "misuse", ARGS("-"), NULL, 30, (int[]){2, END_PES});
}

Test(ch3_8, bad_config, .description = "quotas that sum past the slots, a quota under 2 slots and a tenant past the last stop the program with a message")
{
    expect_error(CH, PROG, 2, "bad", ARGS("quota_sum"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_lora_cache_create", "add up to 9 slots", "8 slots"));
    expect_error(CH, PROG, 2, "bad", ARGS("quota_small"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_lora_cache_create", "tenant 0's quota is 1"));
    expect_error(CH, PROG, 2, "bad", ARGS("tenant"), NULL, TSHMEM_EXIT_ERROR,
                 ARGS("tshmem_lora_tenant_open", "tenant 3", "0 .. 0"));
}
