package io.kvtier.store.policy;

/** A doubly-linked FIFO of {@link PolicyNode}s with O(1) removal from the middle, tracking total weight. */
final class NodeQueue {
    private final byte id;
    private PolicyNode head;
    private PolicyNode tail;
    private long weight;
    private int size;

    NodeQueue(int id) {
        this.id = (byte) id;
    }

    void addLast(PolicyNode node) {
        node.queue = id;
        node.prev = tail;
        node.next = null;
        if (tail == null) {
            head = node;
        } else {
            tail.next = node;
        }
        tail = node;
        weight += node.weight();
        size++;
    }

    /** Inserts {@code node} just before {@code at}, which is in this queue (nearer the head). */
    void addBefore(PolicyNode node, PolicyNode at) {
        node.queue = id;
        node.next = at;
        node.prev = at.prev;
        if (at.prev == null) {
            head = node;
        } else {
            at.prev.next = node;
        }
        at.prev = node;
        weight += node.weight();
        size++;
    }

    PolicyNode pollFirst() {
        PolicyNode node = head;
        if (node != null) {
            remove(node);
        }
        return node;
    }

    void remove(PolicyNode node) {
        if (node.prev == null) {
            head = node.next;
        } else {
            node.prev.next = node.next;
        }
        if (node.next == null) {
            tail = node.prev;
        } else {
            node.next.prev = node.prev;
        }
        node.prev = node.next = null;
        node.queue = 0;
        weight -= node.weight();
        size--;
    }

    boolean contains(PolicyNode node) {
        return node.queue == id;
    }

    long weight() {
        return weight;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return head == null;
    }
}
