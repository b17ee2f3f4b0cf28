/* unwind_reload.S — entry(fn) calls fn at the same offset in two builds
 * with different frames, so that liba.so unloaded and libb.so loaded at its
 * address give the same return address two different rules: a walk with
 * liba's rule (CFA = rsp+16) reads libb's planted word, the address of a
 * function whose return address is undefined, and ends there (a stack
 * shorter than libunwind's). Built with and without -DLIB_B. */
    .text
    .globl entry
    .type entry, @function
entry:
    .cfi_startproc
#ifndef LIB_B
    .fill 15, 1, 0x90
    push %rbx
    .cfi_def_cfa_offset 16
    call *%rdi
    pop %rbx
    .cfi_def_cfa_offset 8
#else
    sub $24, %rsp
    .cfi_def_cfa_offset 32
    lea fake+1(%rip), %rax
    mov %rax, 8(%rsp)
    call *%rdi
    add $24, %rsp
    .cfi_def_cfa_offset 8
#endif
    ret
    .cfi_endproc
    .size entry, .-entry

    .hidden fake
    .type fake, @function
fake:
    .cfi_startproc
    .cfi_undefined rip
    nop
    nop
    ret
    .cfi_endproc
    .size fake, .-fake
    .section .note.GNU-stack, "", @progbits
