import { describe, expect, it } from 'vitest';
import { databaseNameFromUri } from './database-name.ts';

describe('databaseNameFromUri', () => {
  it('reads the path, else defaults to switchyard', () => {
    expect(databaseNameFromUri('mongodb://localhost:27017/prod?retryWrites=true')).toBe('prod');
    expect(databaseNameFromUri('mongodb+srv://user:p%40ss@cluster.example.net/my%2Ddb')).toBe('my-db');
    expect(databaseNameFromUri('mongodb://h1:27017,h2:27017/?replicaSet=rs0')).toBe('switchyard');
    expect(databaseNameFromUri('mongodb://localhost')).toBe('switchyard');
  });

  it('rejects other URLs', () => {
    expect(() => databaseNameFromUri('postgres://localhost/db')).toThrow(TypeError);
  });
});
