/*
 * model_blob.S - the demo model built into the CLI (model.h):
 *
 *     extern const unsigned char nextok_demo_model[];
 *     extern const size_t nextok_demo_model_size;
 *
 * The assembler copies the model file in with .incbin, so the CLI runs with
 * no model download and no generated source. The build names the file in
 * NEXTOK_DEMO_MODEL_PATH (a quoted absolute path, so out-of-tree builds
 * work) and lists it in OBJECT_DEPENDS, so a retrained model rebuilds this
 * object. The %-forms of the section and symbol types are the ones every
 * GNU assembler accepts (on AArch64 '@' starts a comment).
 */
#ifndef NEXTOK_DEMO_MODEL_PATH
#error "NEXTOK_DEMO_MODEL_PATH must name the model file (set by CMakeLists.txt)"
#endif
#ifndef NEXTOK_DEMO_VOCAB_PATH
#error "NEXTOK_DEMO_VOCAB_PATH must name the model's tokenizer.json (set by CMakeLists.txt)"
#endif

    .section .rodata
    .balign 64
    .globl nextok_demo_model
    .type nextok_demo_model, %object
nextok_demo_model:
    .incbin NEXTOK_DEMO_MODEL_PATH
.Lnextok_demo_model_end:
    .size nextok_demo_model, .Lnextok_demo_model_end - nextok_demo_model

    .balign 8
    .globl nextok_demo_model_size
    .type nextok_demo_model_size, %object
nextok_demo_model_size:
#if defined(__LP64__) || defined(_LP64)
    .quad .Lnextok_demo_model_end - nextok_demo_model
    .size nextok_demo_model_size, 8
#else
    .long .Lnextok_demo_model_end - nextok_demo_model
    .size nextok_demo_model_size, 4
#endif

    /* The model's vocabulary (GPT-2's tokenizer.json): nextok_demo_vocab[],
     * nextok_demo_vocab_size, the same way. */
    .section .rodata
    .balign 64
    .globl nextok_demo_vocab
    .type nextok_demo_vocab, %object
nextok_demo_vocab:
    .incbin NEXTOK_DEMO_VOCAB_PATH
.Lnextok_demo_vocab_end:
    .size nextok_demo_vocab, .Lnextok_demo_vocab_end - nextok_demo_vocab

    .balign 8
    .globl nextok_demo_vocab_size
    .type nextok_demo_vocab_size, %object
nextok_demo_vocab_size:
#if defined(__LP64__) || defined(_LP64)
    .quad .Lnextok_demo_vocab_end - nextok_demo_vocab
    .size nextok_demo_vocab_size, 8
#else
    .long .Lnextok_demo_vocab_end - nextok_demo_vocab
    .size nextok_demo_vocab_size, 4
#endif

    /* no executable stack */
    .section .note.GNU-stack, "", %progbits
