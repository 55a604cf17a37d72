package dev.tandem.engine.reference;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Threads that help one caller at a time with the pieces of a job and spin for a while between jobs.
 * One stream's forward pass is two dozen products of 10-100 µs each, one after the other; waking a
 * parked thread for each costs about as much as it saves, so the products of one stream ran on one core
 * and drew one core's memory bandwidth. A partner that is still spinning from the last product picks
 * up the next within a microsecond.
 *
 * <p>Pieces are taken from a shared counter, so the caller never waits for a partner that is asleep or
 * descheduled: it runs whatever the partners have not started, and waits only for pieces already
 * running. A job that finds the partners helping someone else returns false, and its caller runs it
 * itself. Partners start on first use and park after {@link #SPIN_NANOS} without work.
 */
final class SpinningPartners {
    /** How long a partner spins after its last piece before it parks: longer than a layer's gaps. */
    static final long SPIN_NANOS = 200_000;

    /** What runs one piece of a job. */
    interface Piece {
        void run(int index);
    }

    private static final class Job {
        final Piece piece;
        final int pieces;
        final AtomicInteger next = new AtomicInteger();
        final AtomicInteger finished = new AtomicInteger();
        volatile Throwable failure;

        Job(Piece piece, int pieces) {
            this.piece = piece;
            this.pieces = pieces;
        }

        boolean hasPieces() {
            return next.get() < pieces;
        }

        /** Runs pieces until none is left; a failure is kept for the caller and the other pieces still run. */
        void drain() {
            for (int i = next.getAndIncrement(); i < pieces; i = next.getAndIncrement()) {
                try {
                    piece.run(i);
                } catch (Throwable t) {
                    failure = t;
                } finally {
                    finished.incrementAndGet();
                }
            }
        }
    }

    private final int partners;
    private final String name;
    private final AtomicBoolean claimed = new AtomicBoolean();
    private final Object startLock = new Object();
    private volatile Thread[] threads;
    private volatile Job job;
    /** Partners parked (or about to park): a new job unparks them. */
    private final AtomicInteger parked = new AtomicInteger();

    SpinningPartners(int partners, String name) {
        this.partners = partners;
        this.name = name;
    }

    /**
     * Runs pieces 0..pieces-1 on this thread and the partners, returning when all have finished; false
     * (nothing run) when the partners are busy with another caller's job or there are none.
     */
    boolean run(int pieces, Piece piece) {
        if (partners == 0 || !claimed.compareAndSet(false, true)) {
            return false;
        }
        try {
            start();
            Job j = new Job(piece, pieces);
            job = j;
            if (parked.get() > 0) {
                for (Thread t : threads) {
                    LockSupport.unpark(t);
                }
            }
            j.drain();
            // only pieces a partner already started are left: short waits
            for (int spins = 0; j.finished.get() < pieces; spins++) {
                if (spins < 10_000) {
                    Thread.onSpinWait();
                } else {
                    Thread.yield();
                }
            }
            job = null;
            rethrow(j.failure);
            return true;
        } finally {
            claimed.set(false);
        }
    }

    private void start() {
        if (threads != null) {
            return;
        }
        synchronized (startLock) {
            if (threads != null) {
                return;
            }
            Thread[] started = new Thread[partners];
            for (int i = 0; i < partners; i++) {
                Thread t = new Thread(this::partnerLoop, name + "-" + i);
                t.setDaemon(true);
                started[i] = t;
            }
            threads = started;
            for (Thread t : started) {
                t.start();
            }
        }
    }

    private void partnerLoop() {
        long idleSince = System.nanoTime();
        while (true) {
            Job j = job;
            if (j != null && j.hasPieces()) {
                j.drain();
                idleSince = System.nanoTime();
            } else if (System.nanoTime() - idleSince < SPIN_NANOS) {
                Thread.onSpinWait();
            } else {
                // Announce the park before looking for work once more: a caller that posts a job after
                // this look sees the count and unparks (the permit makes a park after it return at once).
                parked.incrementAndGet();
                Job again = job;
                if (again == null || !again.hasPieces()) {
                    LockSupport.park(this);
                }
                parked.decrementAndGet();
                idleSince = System.nanoTime();
            }
        }
    }

    private static void rethrow(Throwable failure) {
        if (failure instanceof RuntimeException e) {
            throw e;
        }
        if (failure instanceof Error e) {
            throw e;
        }
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
    }
}
