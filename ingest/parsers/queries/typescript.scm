(class_declaration name: (_) @name) @definition.class
(abstract_class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(enum_declaration name: (_) @name) @definition.enum
(type_alias_declaration name: (type_identifier) @name) @definition.type
(function_declaration name: (identifier) @name) @definition.function
(function_signature name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: (_) @name) @definition.function
(method_signature name: (_) @name) @definition.function
(abstract_method_signature name: (_) @name) @definition.function
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @definition.function
(assignment_expression left: (member_expression object: (_) @receiver property: (property_identifier) @name) right: [(arrow_function) (function_expression)]) @definition.function
(pair key: (property_identifier) @name value: [(arrow_function) (function_expression)]) @definition.function
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)]) @definition.function

(export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name value: (_) @value) @definition.variable))

(call_expression function: (_) @callee) @call
(new_expression constructor: (_) @callee) @call

(import_statement (import_clause (named_imports (import_specifier name: (_) @import.name))) source: (string (string_fragment) @import.module)) @import
(import_statement (import_clause (named_imports (import_specifier name: (_) @import.name alias: (_) @import.alias))) source: (string (string_fragment) @import.module)) @import
(import_statement (import_clause (identifier) @import.alias) source: (string (string_fragment) @import.module)) @import
(import_statement (import_clause (namespace_import (identifier) @import.alias)) source: (string (string_fragment) @import.module)) @import
(variable_declarator name: (identifier) @import.alias value: (call_expression function: (identifier) @_require arguments: (arguments . (string (string_fragment) @import.module))) (#eq? @_require "require")) @import
