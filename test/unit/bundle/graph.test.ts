import { deletionOrder, findCycles, formatCycle, levels, topologicalOrder } from '../../../src/core/bundle/graph.js';
import { dag } from './builders.js';

// Edges read "a->b": a depends on b, so b comes first.
describe('topologicalOrder', () => {
  it.each<[string, string[], string[]]>([
    ['no nodes', [], []],
    ['lone nodes keep listed order', ['c', 'a', 'b'], ['c', 'a', 'b']],
    ['dependency first', ['a->b'], ['b', 'a']],
    ['chain', ['a->b->c'], ['c', 'b', 'a']],
    ['ties broken by listed order', ['x', 'a->c', 'b->c'], ['x', 'c', 'a', 'b']],
    ['diamond', ['d->b', 'd->c', 'b->a', 'c->a'], ['a', 'b', 'c', 'd']],
    ['a node freed by a placement goes before later-listed ready nodes', ['a->z', 'b'], ['z', 'a', 'b']],
    ['a cycle does not stop the order', ['a->b->a', 'c'], ['c', 'a', 'b']],
  ])('%s', (_name, edges, expected) => {
    expect(topologicalOrder(dag(...edges))).toEqual(expected);
  });
});

describe('deletionOrder', () => {
  it.each<[string, string[], string[]]>([
    ['dependents first', ['a->b->c'], ['a', 'b', 'c']],
    ['ties broken by listed order', ['a->c', 'b->c', 'x'], ['a', 'b', 'c', 'x']],
    ['diamond', ['d->b', 'd->c', 'b->a', 'c->a'], ['d', 'b', 'c', 'a']],
  ])('%s', (_name, edges, expected) => {
    expect(deletionOrder(dag(...edges))).toEqual(expected);
  });
});

describe('levels', () => {
  it.each<[string, string[], string[][]]>([
    ['independent nodes share level 0', ['a', 'b'], [['a', 'b']]],
    ['chain', ['a->b->c'], [['c'], ['b'], ['a']]],
    ['diamond', ['d->b', 'd->c', 'b->a', 'c->a'], [['a'], ['b', 'c'], ['d']]],
    ['longest path decides', ['x->a', 'x->c', 'c->b', 'a'], [['a', 'b'], ['c'], ['x']]],
  ])('%s', (_name, edges, expected) => {
    expect(levels(dag(...edges))).toEqual(expected);
  });
});

describe('findCycles', () => {
  it.each<[string, string[], string[]]>([
    ['acyclic', ['a->b->c', 'a->c'], []],
    ['self reference', ['a->a'], ['a -> a']],
    ['two nodes', ['a->b->a'], ['a -> b -> a']],
    ['named from the first listed node whatever the entry', ['x', 'a', 'x->b', 'b->a->b'], ['a -> b -> a']],
    ['two separate cycles', ['a->b->a', 'c->d->c'], ['a -> b -> a', 'c -> d -> c']],
  ])('%s', (_name, edges, expected) => {
    expect(findCycles(dag(...edges)).map(formatCycle)).toEqual(expected);
  });
});

describe('bounded work (issue 12): long chains and wide graphs', () => {
  const chain = (n: number): string[] => Array.from({ length: n }, (_, i) => `n${i}->n${i + 1}`);

  it('orders and searches a 50,000-node chain without recursion', () => {
    const g = dag(...chain(50_000));
    const order = topologicalOrder(g);
    expect(order[0]).toBe('n50000');
    expect(order[order.length - 1]).toBe('n0');
    expect(findCycles(g)).toEqual([]);
  });

  it('finds a cycle through a 50,000-node chain', () => {
    const g = dag(...chain(50_000), 'n50000->n0');
    expect(findCycles(g)).toHaveLength(1);
    expect(topologicalOrder(g)).toHaveLength(50_001);
  });

  it('keeps listed order among many free nodes', () => {
    const names = Array.from({ length: 5_000 }, (_, i) => `r${i}`);
    expect(topologicalOrder(dag(...names, 'r0->r4999'))).toEqual([...names.slice(1), 'r0']);
  });
});
